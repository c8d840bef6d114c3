-- The month's node outages (docs/methodology.md "Node repair time and availability"): every Slurm
-- node DOWN / DOWN* / DRAIN event of the month's node events, with its cause (the taxonomy applied
-- to its reason: int_health_events_classified), when the node was back (the event's end, when the
-- dump knew it) and its time out inside the month's observed time. A node whose events overlap is
-- out once: each event counts only the time no earlier event of the node already covers. An event
-- of the hour before the month (the month's node events start there) is in the month's time out
-- for its part inside the month; its repair counts in the month it began.

with parameters as (

    select
        month,
        cluster,
        month_start,
        period_end,
        as_of
    from {{ source('run', 'parameters') }}

),

events as (

    select
        events.event_id,
        events.node,
        events.event_at as out_at,
        -- an end after the dump is not known (sacctmgr prints Unknown while the node is out)
        case when events.ended_at <= parameters.as_of then events.ended_at end as back_at,
        events.check_name as node_state,
        events.message as reason,
        events.category,
        events.failure_domain,
        events.severity,
        events.event_at >= parameters.month_start as began_in_month,
        {{ dbt.datediff(
            'greatest(events.event_at, parameters.month_start)',
            'least(coalesce(case when events.ended_at <= parameters.as_of then events.ended_at end, parameters.period_end), parameters.period_end)',
            'second') }} as clipped_seconds,
        greatest(events.event_at, parameters.month_start) as out_from
    from {{ ref('int_health_events_classified') }} as events
    cross join parameters
    where events.source = 'slurm_event' and events.event_at < parameters.period_end

),

-- the latest end, inside the month, of the node's events that began before this one
covered as (

    select
        *,
        {{ dbt.dateadd('second', 'clipped_seconds', 'out_from') }} as out_until,
        max({{ dbt.dateadd('second', 'clipped_seconds', 'out_from') }}) over (
            partition by node order by out_from, out_at, event_id
            rows between unbounded preceding and 1 preceding
        ) as covered_until
    from events

)

select
    parameters.month,
    parameters.cluster,
    covered.node,
    covered.event_id,
    covered.out_at,
    covered.back_at,
    covered.node_state,
    covered.reason,
    covered.category,
    covered.failure_domain,
    covered.severity,
    covered.began_in_month,
    case
        when covered.back_at is not null then {{ dbt.datediff('covered.out_at', 'covered.back_at', 'second') }}
    end as repair_seconds,
    cast(greatest(
        {{ dbt.datediff(
            'greatest(covered.out_from, coalesce(covered.covered_until, covered.out_from))', 'covered.out_until', 'second'
        ) }},
        0
    ) as bigint) as out_seconds
from covered
cross join parameters
