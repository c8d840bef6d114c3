-- Each period's lemon-node windows (the macro lemon_windows: a month's own and trailing ones, a
-- study's range) and the fleet of each: the GPU nodes (dim_nodes.is_gpu_node: a CPU-only node is
-- never a lemon candidate) seen (fct_node_days) in the months the window spans (for a month's own
-- window of lemon_window_days, the GPU nodes seen in the month), and how many of them have no row
-- in fct_node_lemon_signals (zero in every signal of the fleet fits).

with windows as (

    {{ lemon_windows() }}

),

gpu_node_days as (

    select
        node_days.node,
        node_days.day
    from {{ ref('fct_node_days') }} as node_days
    inner join {{ ref('dim_nodes') }} as nodes on nodes.node = node_days.node
    where nodes.is_gpu_node

),

fleet as (

    select
        windows.period_id,
        windows.lemon_window,
        count(distinct node_days.node) as fleet_nodes
    from windows
    left join gpu_node_days as node_days
        on
            node_days.day >= cast({{ dbt.date_trunc('month', 'windows.window_start') }} as date)
            and node_days.day < cast(windows.window_end as date)
    group by windows.period_id, windows.lemon_window

),

signals as (

    select
        period_id,
        lemon_window,
        count(*) as nodes_with_signals,
        count(case when health_events > 0 then 1 end) as nodes_with_health_events
    from {{ ref('fct_node_lemon_signals') }}
    group by period_id, lemon_window

)

select
    windows.period_id,
    windows.cluster,
    windows.lemon_window,
    windows.window_start,
    windows.window_end,
    fleet.fleet_nodes,
    coalesce(signals.nodes_with_health_events, 0) as nodes_with_health_events,
    coalesce(signals.nodes_with_signals, 0) as nodes_with_signals,
    greatest(fleet.fleet_nodes - coalesce(signals.nodes_with_signals, 0), 0) as nodes_without_signals
from windows
inner join fleet on fleet.period_id = windows.period_id and fleet.lemon_window = windows.lemon_window
left join signals on signals.period_id = windows.period_id and signals.lemon_window = windows.lemon_window
