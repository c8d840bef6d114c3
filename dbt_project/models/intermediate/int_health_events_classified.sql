-- Every node signal as one health-event table, classified by the first matching taxonomy rule; each
-- event under the month whose landing it came from (a log repeated across a month end is in both).
-- The landed source names and what each source's rules match come from the seed landed_sources
-- (written from the source kinds' declarations, flows/ingest/sources/registry.py).

with landed_sources as (

    select * from {{ ref('landed_sources') }}

),

xid as (

    select
        xid_events.month,
        xid_events.cluster,
        xid_events.node,
        xid_events.event_at,
        xid_events.event_uncertainty_seconds,
        landed_sources.source,
        landed_sources.source as check_name,
        cast(xid_events.xid as {{ dbt.type_string() }}) as code,
        xid_events.message,
        cast(xid_events.xid as {{ dbt.type_string() }}) as signal_text,
        cast(null as {{ dbt.type_timestamp() }}) as ended_at,
        xid_events.source_file,
        xid_events.source_line
    from {{ ref('stg_health__xid_events') }} as xid_events
    inner join landed_sources
        on landed_sources.landed_table = 'xid_events'

),

slurm_events as (

    select
        node_events.month,
        node_events.cluster,
        node_events.node,
        node_events.event_at,
        0 as event_uncertainty_seconds,
        landed_sources.source,
        node_events.node_state as check_name,
        node_events.node_state as code,
        node_events.reason as message,
        node_events.reason as signal_text,
        -- when the node was back (a node event's end; none while it is still out): node repair times
        node_events.ended_at,
        node_events.source_file,
        node_events.source_line
    from {{ ref('stg_slurm__node_events') }} as node_events
    inner join landed_sources
        on landed_sources.landed_table = 'node_events'

),

checks as (

    select
        checks.month,
        checks.cluster,
        checks.node,
        checks.event_at,
        checks.event_uncertainty_seconds,
        checks.source,
        checks.check_name,
        checks.status as code,
        checks.message,
        -- what the source's rules match (landed_sources.signal): the check's name, or with its
        -- status (DCGM "<system>: <Failure|Warning>", links "<interface>: <event>", IPMI SEL
        -- "<sensor>: <event>"), or with its status and message (GCM)
        case landed_sources.signal
            when 'check: status' then checks.check_name || ': ' || checks.status
            when 'check: status: message' then checks.check_name || ': ' || checks.status || ': ' || checks.message
            else checks.check_name
        end as signal_text,
        cast(null as {{ dbt.type_timestamp() }}) as ended_at,
        checks.source_file,
        checks.source_line
    from {{ ref('stg_health__checks') }} as checks
    left join landed_sources
        on landed_sources.source = checks.source

),

events as (

    select * from xid
    union all
    select * from slurm_events
    union all
    select * from checks

),

rules as (

    select * from {{ ref('failure_taxonomy') }}

),

-- A rule depends only on (source, signal text), and a month's hundreds of thousands of events
-- have a few thousand distinct texts: each is matched once (8.0 s -> 1.2 s at 278k events).
signals as (

    select distinct
        source,
        signal_text
    from events

),

ranked_rules as (

    select
        signals.source,
        signals.signal_text,
        rules.rule_order,
        rules.category,
        rules.severity,
        row_number() over (partition by signals.source, signals.signal_text order by rules.rule_order) as rule_rank
    from signals
    left join rules
        on
            rules.source = signals.source
            and {{ regex_contains('signals.signal_text', 'rules.pattern') }}

),

first_rules as (

    select
        source,
        signal_text,
        rule_order,
        category,
        severity
    from ranked_rules
    where rule_rank = 1

),

matched as (

    select
        events.*,
        first_rules.rule_order,
        first_rules.category,
        first_rules.severity,
        -- the event's number among those of its source line and node: a DCGM file's checks all
        -- have line 1 and a GCM line can hold several records of one node, and each is an event
        row_number() over (
            partition by events.month, events.source, events.source_file, events.source_line, events.node
            order by events.event_at, events.check_name, events.code, events.message
        ) as line_event
    from events
    left join first_rules
        on
            first_rules.source = events.source
            and first_rules.signal_text is not distinct from events.signal_text

),

final as (

    select
        {{ dbt.hash(dbt.concat(["matched.source", "'|'", "matched.source_file", "'|'",
                                "cast(matched.source_line as " ~ dbt.type_string() ~ ")", "'|'", "matched.node", "'|'",
                                "cast(matched.line_event as " ~ dbt.type_string() ~ ")"])) }} as event_id,
        matched.month,
        matched.cluster,
        matched.node,
        matched.event_at,
        matched.event_uncertainty_seconds,
        matched.source,
        matched.check_name,
        matched.code,
        matched.message,
        matched.ended_at,
        coalesce(matched.category, 'unclassified') as category,
        coalesce(matched.severity, 'warning') as severity,
        categories.failure_domain,
        categories.cause_priority,
        matched.rule_order as matched_rule,
        matched.source_file,
        matched.source_line
    from matched
    left join {{ ref('failure_categories') }} as categories
        on categories.category = coalesce(matched.category, 'unclassified')

)

select * from final
