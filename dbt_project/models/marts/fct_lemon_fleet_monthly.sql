-- The month's lemon-node windows (the macro lemon_window: the month's and the trailing one) and
-- the fleet of each: the GPU nodes (dim_nodes.is_gpu_node: a CPU-only node is never a lemon
-- candidate) seen (fct_node_days) in the months the window spans (for the month's own window of
-- lemon_window_days, the GPU nodes seen in the month), and how many of them have no row in
-- fct_node_lemon_signals (zero in every signal of the fleet fits).

{% call(month) for_each_run_month() %}
with parameters as (

    select * from ({{ lemon_window() }}) as windows
    where month = {{ month }}

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
        parameters.lemon_window,
        count(distinct node_days.node) as fleet_nodes
    from parameters
    left join gpu_node_days as node_days
        on
            node_days.day >= cast({{ dbt.date_trunc('month', 'parameters.window_start') }} as date)
            and node_days.day < cast(parameters.window_end as date)
    group by parameters.lemon_window

),

signals as (

    select
        lemon_window,
        count(*) as nodes_with_signals,
        count(case when health_events > 0 then 1 end) as nodes_with_health_events
    from {{ ref('fct_node_lemon_signals') }}
    where month = {{ month }}
    group by lemon_window

)

select
    parameters.month,
    parameters.cluster,
    parameters.lemon_window,
    parameters.window_start,
    parameters.window_end,
    fleet.fleet_nodes,
    coalesce(signals.nodes_with_health_events, 0) as nodes_with_health_events,
    coalesce(signals.nodes_with_signals, 0) as nodes_with_signals,
    greatest(fleet.fleet_nodes - coalesce(signals.nodes_with_signals, 0), 0) as nodes_without_signals
from parameters
inner join fleet on fleet.lemon_window = parameters.lemon_window
left join signals on signals.lemon_window = parameters.lemon_window
{% endcall %}
