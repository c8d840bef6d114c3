-- Every node signal as one health-event table, classified by the first matching taxonomy rule.

with xid as (

    select
        cluster,
        node,
        event_at,
        'xid' as source,
        'xid' as check_name,
        cast(xid as {{ dbt.type_string() }}) as code,
        message,
        cast(xid as {{ dbt.type_string() }}) as signal_text,
        cast(null as {{ dbt.type_timestamp() }}) as ended_at,
        source_file,
        source_line
    from {{ ref('stg_health__xid_events') }}

),

slurm_events as (

    select
        cluster,
        node,
        event_at,
        'slurm_event' as source,
        node_state as check_name,
        node_state as code,
        reason as message,
        reason as signal_text,
        -- when the node was back (a node event's end; none while it is still out): node repair times
        ended_at,
        source_file,
        source_line
    from {{ ref('stg_slurm__node_events') }}

),

checks as (

    select
        cluster,
        node,
        event_at,
        source,
        check_name,
        status as code,
        message,
        -- NHC and ticket rules match the check name (ticket: its category); DCGM rules match
        -- "<system>: <Failure|Warning>", link rules "<interface>: <event>", IPMI SEL rules
        -- "<sensor>: <event>"; GCM rules "<check>: <CRITICAL|WARNING|UNKNOWN>: <message>"
        case
            when source in ('dcgm', 'link', 'ipmi_sel') then check_name || ': ' || status
            when source = 'gcm' then check_name || ': ' || status || ': ' || message
            else check_name
        end as signal_text,
        cast(null as {{ dbt.type_timestamp() }}) as ended_at,
        source_file,
        source_line
    from {{ ref('stg_health__checks') }}

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
            partition by events.source, events.source_file, events.source_line, events.node
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
        matched.cluster,
        matched.node,
        matched.event_at,
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
