-- The lemon-node window of the month and its fleet: the nodes seen in the month (fct_node_days),
-- so a month's fleet never depends on which other months have been built, and how many of them
-- have no row in fct_node_lemon_signals (zero in every signal of the fleet fits).

with parameters as (

    {{ lemon_window() }}

),

fleet as (

    select count(distinct node) as fleet_nodes
    from {{ ref('fct_node_days') }}
    where month = {{ run_parameter('month') }}

),

signals as (

    select
        count(*) as nodes_with_signals,
        count(case when health_events > 0 then 1 end) as nodes_with_health_events
    from {{ ref('fct_node_lemon_signals') }}
    where month = {{ run_parameter('month') }}

)

select
    parameters.month,
    parameters.cluster,
    parameters.window_start,
    parameters.window_end,
    fleet.fleet_nodes,
    signals.nodes_with_health_events,
    signals.nodes_with_signals,
    greatest(fleet.fleet_nodes - signals.nodes_with_signals, 0) as nodes_without_signals
from parameters
cross join fleet
cross join signals
