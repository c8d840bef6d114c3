-- Each month's node faults (docs/methodology.md "The fleet's node fault rate"): every node's
-- critical health events (node DOWN/DRAIN events with a failure reason, hardware Xids, failed
-- health checks: what the taxonomy calls critical), grouped into incidents by the rule of the
-- macro starts_incident. One row per fault whose first event falls in the month, whether or not a
-- job was running, on any node (CPU-only ones too): fct_period_node_failure_rate's fleet fault
-- count is of those on GPU nodes (dim_nodes.is_gpu_node).

with parameters as (

    {{ run_months_with_cluster() }}

),

-- The month's critical events, and those of the hour before it that the month's logs hold: an
-- event within the hour of one before the month continues a fault the month before counts.
critical as (

    select
        events.month,
        events.event_id,
        events.node,
        events.event_at,
        events.source,
        events.category,
        events.cause_priority,
        lag(events.event_at) over (
            partition by events.month, events.node order by events.event_at, events.cause_priority, events.event_id
        ) as previous_event_at
    from {{ ref('int_health_events_classified') }} as events
    inner join parameters on parameters.month = events.month
    where
        events.severity = 'critical'
        and events.event_at >= {{ dbt.dateadd('hour', -1, 'parameters.month_start') }}
        and events.event_at < parameters.month_end

),

numbered as (

    select
        *,
        sum(case when {{ starts_incident('event_at', 'previous_event_at') }} then 1 else 0 end) over (
            partition by month, node order by event_at, cause_priority, event_id
            rows between unbounded preceding and current row
        ) as fault_number,
        row_number() over (partition by month, node order by event_at, cause_priority, event_id) as event_number
    from critical

),

faults as (

    select
        month,
        node,
        fault_number,
        min(event_at) as fault_at,
        max(event_at) as last_event_at,
        count(*) as critical_events,
        min(event_number) as first_event_number
    from numbered
    group by month, node, fault_number

)

select
    parameters.month,
    parameters.cluster,
    faults.node,
    faults.fault_at,
    faults.last_event_at,
    faults.critical_events,
    -- the fault's first event names it (at the same second, the category first in priority), as an
    -- attributed failure's incident is named
    numbered.category,
    numbered.source,
    numbered.event_id as first_event_id
from faults
inner join numbered
    on
        numbered.month = faults.month
        and numbered.node = faults.node
        and numbered.event_number = faults.first_event_number
inner join parameters on parameters.month = faults.month
where faults.fault_at >= parameters.month_start
