-- The lemon-node window of the month and its fleet: the nodes seen in the month (fct_node_days),
-- so a month's fleet never depends on which other months have been built, and how many of them
-- logged no health event in the window (zero incident hours in the fleet fit).

with parameters as (

    {{ lemon_window() }}

),

fleet as (

    select count(distinct node) as fleet_nodes
    from {{ ref('fct_node_days') }}
    where month = {{ run_parameter('month') }}

),

signals as (

    select count(*) as nodes_with_health_events
    from {{ ref('fct_node_lemon_signals') }}
    where month = {{ run_parameter('month') }} and health_events > 0

)

select
    parameters.month,
    parameters.cluster,
    parameters.window_start,
    parameters.window_end,
    fleet.fleet_nodes,
    signals.nodes_with_health_events,
    greatest(fleet.fleet_nodes - signals.nodes_with_health_events, 0) as quiet_nodes
from parameters
cross join fleet
cross join signals
