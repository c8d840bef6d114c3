-- The month's node outages (docs/methodology.md "Node repair time and availability"): a node's
-- Slurm DOWN / DOWN* / DRAIN events of the month's node events that overlap or touch are one outage
-- (Slurm ends an event and begins another when a drained node goes down, or a down one is
-- drained), from the first event's start to the last one's end, which the dump knows once every
-- event of it has ended (the events up to the dump are read: an outage begun in the month may go
-- on in events after its end). Its cause is the taxonomy's category of its first critical event's
-- reason (else of its first event's: a maintenance drain). Its time out is inside the month's
-- observed time. An outage of the hour before the month (the month's node events start there)
-- counts in the month for its part inside it; its repair counts in the month it began.

with parameters as (

    {{ run_months_with_cluster() }}

),

events as (

    select
        events.month,
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
        events.cause_priority
    from {{ ref('int_health_events_classified') }} as events
    inner join parameters on parameters.month = events.month
    -- up to the dump: an event after the month's end may continue an outage begun in it
    where
        events.source in (
            select node_event_sources.source
            from {{ ref('landed_sources') }} as node_event_sources
            where node_event_sources.landed_table = 'node_events'
        )
        and events.event_at < parameters.as_of

),

-- each event with the latest end of the node's events before it (an unknown end: still out)
ordered as (

    select
        events.*,
        max(coalesce(events.back_at, parameters.as_of)) over (
            partition by events.month, events.node order by events.out_at, events.event_id
            rows between unbounded preceding and 1 preceding
        ) as previous_back_at
    from events
    inner join parameters on parameters.month = events.month

),

numbered as (

    select
        *,
        sum(case when previous_back_at is null or out_at > previous_back_at then 1 else 0 end) over (
            partition by node order by out_at, event_id rows between unbounded preceding and current row
        ) as outage_number
    from ordered

),

-- the event that names the outage: its first critical one, else its first
ranked as (

    select
        *,
        row_number() over (
            partition by month, node, outage_number
            order by case when severity = 'critical' then 0 else 1 end, out_at, cause_priority, event_id
        ) as cause_rank
    from numbered

),

outages as (

    select
        month,
        node,
        outage_number,
        min(out_at) as out_at,
        -- back when every event of it has ended: its latest end
        case when count(*) = count(back_at) then max(back_at) end as back_at,
        count(*) as node_events
    from numbered
    group by month, node, outage_number

),

clipped as (

    select
        outages.*,
        named.event_id,
        named.node_state,
        named.reason,
        named.category,
        named.failure_domain,
        named.severity,
        greatest(outages.out_at, parameters.month_start) as out_from,
        least(coalesce(outages.back_at, parameters.period_end), parameters.period_end) as out_until
    from outages
    inner join ranked as named
        on
            named.month = outages.month
            and named.node = outages.node
            and named.outage_number = outages.outage_number
            and named.cause_rank = 1
    inner join parameters on parameters.month = outages.month
    where outages.out_at < parameters.period_end  -- one begun later is the next month's

)

select
    parameters.month,
    parameters.cluster,
    clipped.node,
    clipped.event_id,
    clipped.out_at,
    clipped.back_at,
    clipped.node_events,
    clipped.node_state,
    clipped.reason,
    clipped.category,
    clipped.failure_domain,
    clipped.severity,
    clipped.out_at >= parameters.month_start as began_in_month,
    case
        when clipped.back_at is not null then {{ dbt.datediff('clipped.out_at', 'clipped.back_at', 'second') }}
    end as repair_seconds,
    cast(greatest({{ dbt.datediff('clipped.out_from', 'clipped.out_until', 'second') }}, 0) as bigint) as out_seconds
from clipped
inner join parameters on parameters.month = clipped.month
