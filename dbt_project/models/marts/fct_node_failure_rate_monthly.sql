-- The month's node failure rate r_f under both definitions (docs/methodology.md "Node failure
-- rate"), as its counts: infrastructure failures and the GPU node-days they happened in. The
-- paper's definition counts attempts with more than paper_min_gpus GPUs; "all" every GPU attempt
-- (is_gpu_attempt, the one rule of int_attempts_month_scoped: CPU-only attempts are in neither).
-- Beside them, the fleet's node fault rate ("The fleet's node fault rate"): the node faults of
-- fct_node_faults on GPU nodes (dim_nodes.is_gpu_node, the one rule of which nodes the fleet
-- counts: a CPU-only node's faults and days are in neither) over the GPU nodes' days (those seen in
-- the month, busy or idle, for the month's observed time). One row per month built, also for a
-- month without attempts. The
-- node-seconds are kept as integers so that sums over months are exact in any order.

{% call(month) for_each_run_month() %}
with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month = {{ month }} and is_gpu_attempt

),

parameters as (

    select
        month,
        month_start,
        period_end
    from {{ source('run', 'months') }}
    where month = {{ month }}

),

gpu_nodes as (

    select node
    from {{ ref('dim_nodes') }}
    where is_gpu_node

),

-- the GPU nodes seen in the month: ran an attempt or logged a health event (the lemon fleet's rule)
fleet as (

    select count(distinct node_days.node) as fleet_nodes
    from {{ ref('fct_node_days') }} as node_days
    inner join gpu_nodes on gpu_nodes.node = node_days.node
    where node_days.month = {{ month }}

),

faults as (

    select count(*) as fleet_faults
    from {{ ref('fct_node_faults') }} as node_faults
    inner join gpu_nodes on gpu_nodes.node = node_faults.node
    where node_faults.month = {{ month }}

),

counted as (

    select
        cast(coalesce(sum(
            case when is_infra_failure and gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end
        ), 0) as bigint) as paper_failures,
        cast(coalesce(sum(
            case when gpus > {{ run_parameter('paper_min_gpus') }} then gpu_node_seconds else 0 end
        ), 0) as bigint) as paper_node_seconds,
        cast(coalesce(sum(case when is_infra_failure then 1 else 0 end), 0) as bigint) as all_failures,
        cast(coalesce(sum(gpu_node_seconds), 0) as bigint) as all_node_seconds
    from attempts

)

select
    parameters.month,
    parameters.month_start,
    counted.paper_failures,
    counted.paper_node_seconds,
    counted.paper_node_seconds / 86400e0 as paper_node_days,
    counted.all_failures,
    counted.all_node_seconds,
    counted.all_node_seconds / 86400e0 as all_node_days,
    cast(faults.fleet_faults as bigint) as fleet_faults,
    cast(fleet.fleet_nodes as bigint) as fleet_nodes,
    cast(fleet.fleet_nodes * {{ dbt.datediff('parameters.month_start', 'parameters.period_end', 'second') }} as bigint)
        as fleet_node_seconds,
    fleet.fleet_nodes * {{ dbt.datediff('parameters.month_start', 'parameters.period_end', 'second') }} / 86400e0
        as fleet_node_days
from parameters
cross join counted
cross join fleet
cross join faults
{% endcall %}
