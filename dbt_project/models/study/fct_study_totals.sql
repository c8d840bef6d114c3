-- The study's range in totals (one row): the months built, attempts (GPU and CPU-only) and GPU-hours, the node
-- failure rate's counts under both definitions, the fleet's (GPU nodes') node faults and node-days, and the CPU-only nodes
-- left out of it, and the lost goodput with its second-order share,
-- each the sum of the monthly marts over the range (their rows are clipped to their month).

with totals as (

    select
        count(*) as months_built,
        cast(coalesce(sum(attempts), 0) as bigint) as attempts,
        cast(coalesce(sum(gpu_attempts), 0) as bigint) as gpu_attempts,
        cast(coalesce(sum(cpu_only_attempts), 0) as bigint) as cpu_only_attempts,
        -- as fleet_nodes: the most of any month
        cast(coalesce(max(cpu_only_nodes), 0) as bigint) as cpu_only_nodes,
        coalesce(sum(gpu_hours), 0) as gpu_hours,
        coalesce(sum(gpu_node_days), 0) as gpu_node_days,
        cast(coalesce(sum(infra_failures), 0) as bigint) as infra_failures
    from {{ ref('fct_month_totals') }}
    where {{ in_study() }}

),

rates as (

    select
        {{ node_failure_rate_sums() }},
        cast(coalesce(sum(fleet_faults), 0) as bigint) as fleet_faults,
        cast(coalesce(max(fleet_nodes), 0) as bigint) as fleet_nodes,
        cast(coalesce(sum(fleet_node_seconds), 0) as bigint) / 86400e0 as fleet_node_days
    from {{ ref('fct_node_failure_rate_monthly') }}
    where {{ in_study() }}

),

lost as (

    select
        coalesce(sum(lost_gpu_hours), 0) as lost_gpu_hours,
        coalesce(sum(first_order_gpu_hours), 0) as first_order_gpu_hours,
        coalesce(sum(second_order_gpu_hours), 0) as second_order_gpu_hours,
        cast(coalesce(sum(second_order_preemptions), 0) as bigint) as second_order_preemptions
    from {{ ref('fct_lost_goodput_monthly') }}
    where {{ in_study() }}

)

select
    {{ run_parameter('study_from') }} as from_month,
    {{ run_parameter('study_to') }} as to_month,
    totals.months_built,
    totals.attempts,
    totals.gpu_attempts,
    totals.cpu_only_attempts,
    totals.cpu_only_nodes,
    totals.gpu_hours,
    totals.gpu_node_days,
    totals.infra_failures,
    rates.paper_failures,
    rates.paper_node_days,
    rates.all_failures,
    rates.all_node_days,
    rates.fleet_faults,
    rates.fleet_nodes,
    rates.fleet_node_days,
    lost.lost_gpu_hours,
    lost.first_order_gpu_hours,
    lost.second_order_gpu_hours,
    lost.second_order_preemptions,
    {{ share('lost.lost_gpu_hours', 'totals.gpu_hours') }} as lost_share_of_gpu_hours
from totals
cross join rates
cross join lost
