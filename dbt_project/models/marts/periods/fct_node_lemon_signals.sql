-- Lemon-node signals (docs/methodology.md "Lemon nodes") per node over each lemon window of each
-- period (the macro lemon_windows: a month's own lemon_window_days and its trailing
-- lemon_trailing_days, ending at its end; a study's range): health-event counts from
-- fct_health_events (every month the window spans), the infrastructure failures that named the node
-- as the cause, grouped into incidents, and the most incidents within lemon_repeat_days (the
-- repeat-offender signal). One row per window and GPU node (dim_nodes.is_gpu_node: a CPU-only node
-- is never a lemon candidate) with a health event or such a failure in the window. The rules that
-- make a node a candidate are flows/figures/lemons.py's: they are fitted to the fleet
-- (fct_period_lemon_fleet, GPU nodes too).

with windows as (

    {{ lemon_windows() }}

),

events as (

    select
        windows.period_id,
        windows.lemon_window,
        health_events.*
    from {{ ref('fct_health_events') }} as health_events
    inner join windows
        on
            health_events.event_at >= windows.window_start
            and health_events.event_at < windows.window_end

),

health as (

    select
        events.period_id,
        events.lemon_window,
        events.node,
        count(*) as health_events,
        -- a burst of lines from one incident counts once: hours with a critical event
        count(distinct case when events.severity = 'critical' then {{ dbt.date_trunc('hour', 'events.event_at') }} end)
            as incident_hours,
        -- the paper's signals, each from the sources the seed landed_sources names for it
        cast(sum(
            case when sources.lemon_signal = 'xid_cnt' and events.failure_domain = 'hardware' then 1 else 0 end
        ) as bigint) as xid_cnt,
        cast(sum(
            case
                when sources.lemon_signal = 'out_count' and events.category <> 'planned_maintenance' then 1
                else 0
            end
        ) as bigint) as out_count,
        cast(sum(case when sources.lemon_signal = 'tickets' then 1 else 0 end) as bigint) as tickets
    from events
    left join {{ ref('landed_sources') }} as sources on sources.source = events.source
    group by events.period_id, events.lemon_window, events.node

),

failures as (

    select
        windows.period_id,
        windows.lemon_window,
        node_failures.cause_node as node,
        node_failures.failed_at,
        node_failures.n_nodes,
        lag(node_failures.failed_at) over (
            partition by windows.period_id, windows.lemon_window, node_failures.cause_node order by node_failures.failed_at
        ) as previous_failed_at
    from {{ ref('fct_failures') }} as node_failures
    inner join windows
        on
            node_failures.failed_at >= windows.window_start
            and node_failures.failed_at < windows.window_end
    where node_failures.cause_node is not null

),

-- One fault ends every job on the node: a failure more than an hour after the one before it on
-- the node starts a new incident, the others belong to the running one.
incidents as (

    select
        period_id,
        lemon_window,
        node,
        failed_at as incident_at
    from failures
    where {{ starts_incident('failed_at', 'previous_failed_at') }}

),

-- For each incident, the incidents of the node in the lemon_repeat_days up to it (the span's
-- ends included).
incidents_within as (

    select
        later.period_id,
        later.lemon_window,
        later.node,
        later.incident_at,
        count(*) as incidents_within
    from incidents as later
    inner join incidents as earlier
        on
            earlier.period_id = later.period_id
            and earlier.lemon_window = later.lemon_window
            and earlier.node = later.node
            and earlier.incident_at <= later.incident_at
            and earlier.incident_at
            >= {{ dbt.dateadd('day', '-1 * ' ~ run_parameter('lemon_repeat_days'), 'later.incident_at') }}
    group by later.period_id, later.lemon_window, later.node, later.incident_at

),

node_incidents as (

    select
        period_id,
        lemon_window,
        node,
        count(*) as failure_incidents,
        max(incidents_within) as most_incidents_within_repeat_days
    from incidents_within
    group by period_id, lemon_window, node

),

node_failures as (

    select
        period_id,
        lemon_window,
        node,
        count(*) as node_fails,
        cast(sum(case when n_nodes = 1 then 1 else 0 end) as bigint) as single_node_node_fails
    from failures
    group by period_id, lemon_window, node

),

-- The single-node attempts that ended on the node in the window (fct_node_days, every month the
-- window spans), so that the failure rate divides the window's failures by the window's attempts.
single_node_attempts as (

    select
        windows.period_id,
        windows.lemon_window,
        node_days.node,
        sum(node_days.single_node_attempts_ended) as single_node_attempts
    from {{ ref('fct_node_days') }} as node_days
    inner join windows
        on
            node_days.day >= cast(windows.window_start as date)
            and node_days.day < cast(windows.window_end as date)
    group by windows.period_id, windows.lemon_window, node_days.node

),

signalled as (

    select
        period_id,
        lemon_window,
        node
    from health
    union
    select
        period_id,
        lemon_window,
        node
    from node_failures

),

nodes as (

    select
        signalled.period_id,
        signalled.lemon_window,
        signalled.node
    from signalled
    inner join {{ ref('dim_nodes') }} as gpu_nodes on gpu_nodes.node = signalled.node
    where gpu_nodes.is_gpu_node

),

final as (

    select
        windows.period_id,
        windows.cluster,
        nodes.lemon_window,
        nodes.node,
        windows.window_start,
        windows.window_end,
        coalesce(health.health_events, 0) as health_events,
        coalesce(health.incident_hours, 0) as incident_hours,
        coalesce(health.xid_cnt, 0) as xid_cnt,
        coalesce(health.out_count, 0) as out_count,
        coalesce(health.tickets, 0) as tickets,
        coalesce(node_failures.node_fails, 0) as node_fails,
        coalesce(node_failures.node_fails - node_failures.single_node_node_fails, 0) as multi_node_node_fails,
        coalesce(node_failures.single_node_node_fails, 0) as single_node_node_fails,
        coalesce(single_node_attempts.single_node_attempts, 0) as single_node_attempts,
        case
            when single_node_attempts.single_node_attempts > 0
                then
                    cast(coalesce(node_failures.single_node_node_fails, 0) as double)
                    / single_node_attempts.single_node_attempts
        end as single_node_node_failure_rate,
        coalesce(node_incidents.failure_incidents, 0) as failure_incidents,
        coalesce(node_incidents.most_incidents_within_repeat_days, 0) as most_incidents_within_repeat_days
    from nodes
    inner join windows on windows.period_id = nodes.period_id and windows.lemon_window = nodes.lemon_window
    left join health
        on health.period_id = nodes.period_id and health.lemon_window = nodes.lemon_window and health.node = nodes.node
    left join node_failures
        on node_failures.period_id = nodes.period_id and node_failures.lemon_window = nodes.lemon_window and node_failures.node = nodes.node
    left join node_incidents
        on node_incidents.period_id = nodes.period_id and node_incidents.lemon_window = nodes.lemon_window and node_incidents.node = nodes.node
    left join single_node_attempts
        on
            single_node_attempts.period_id = nodes.period_id
            and single_node_attempts.lemon_window = nodes.lemon_window
            and single_node_attempts.node = nodes.node

)

select * from final
