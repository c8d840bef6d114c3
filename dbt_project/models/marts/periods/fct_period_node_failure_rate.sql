-- r_f of each period (dim_periods) under both definitions (docs/methodology.md "Node failure
-- rate"), as its counts: infrastructure failures and the GPU node-days they happened in, summed over
-- the period's months built (macro node_failure_rate_sums). The paper's definition counts attempts
-- with more than paper_min_gpus GPUs; "all" every GPU attempt (is_gpu_attempt, the one rule of
-- int_attempts_month_scoped: CPU-only attempts are in neither). The same split into the period's
-- last month and its earlier months (the report tests a trailing window's last month against the
-- earlier ones). Beside them, the fleet's node fault rate ("The fleet's node fault rate"): the node
-- faults of fct_node_faults on GPU nodes (dim_nodes.is_gpu_node, the one rule of which nodes the
-- fleet counts) over the GPU nodes' days (those seen in each month, busy or idle, for the month's
-- observed window, fct_months_built.observed_start to period_end); fleet_nodes is the most of any month. One row per
-- period, also for months without attempts. Node-seconds are summed as integers: exact in any order.

with gpu_nodes as (

    select node
    from {{ ref('dim_nodes') }}
    where is_gpu_node

),

attempts as (

    select
        month,
        cast(coalesce(sum(
            case when is_infra_failure and gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end
        ), 0) as bigint) as paper_failures,
        cast(coalesce(sum(
            case when gpus > {{ run_parameter('paper_min_gpus') }} then gpu_node_seconds else 0 end
        ), 0) as bigint) as paper_node_seconds,
        cast(coalesce(sum(case when is_infra_failure then 1 else 0 end), 0) as bigint) as all_failures,
        cast(coalesce(sum(gpu_node_seconds), 0) as bigint) as all_node_seconds
    from {{ ref('fct_attempts') }}
    where is_gpu_attempt
    group by month

),

-- the GPU nodes seen in each month: ran an attempt or logged a health event (the lemon fleet's rule)
fleet as (

    select
        node_days.month,
        count(distinct node_days.node) as fleet_nodes
    from {{ ref('fct_node_days') }} as node_days
    inner join gpu_nodes on gpu_nodes.node = node_days.node
    group by node_days.month

),

-- the GPU nodes' faults within the month's observed window, the time fleet_node_seconds covers
faults as (

    select
        node_faults.month,
        count(*) as fleet_faults
    from {{ ref('fct_node_faults') }} as node_faults
    inner join gpu_nodes on gpu_nodes.node = node_faults.node
    inner join {{ ref('fct_months_built') }} as months
        on
            months.month = node_faults.month
            and node_faults.fault_at >= months.observed_start
            and node_faults.fault_at < months.period_end
    group by node_faults.month

),

by_month as (

    select
        months.month,
        coalesce(attempts.paper_failures, 0) as paper_failures,
        coalesce(attempts.paper_node_seconds, 0) as paper_node_seconds,
        coalesce(attempts.all_failures, 0) as all_failures,
        coalesce(attempts.all_node_seconds, 0) as all_node_seconds,
        cast(coalesce(faults.fleet_faults, 0) as bigint) as fleet_faults,
        cast(coalesce(fleet.fleet_nodes, 0) as bigint) as fleet_nodes,
        cast(coalesce(fleet.fleet_nodes, 0) * {{ dbt.datediff('months.observed_start', 'months.period_end', 'second') }} as bigint)
            as fleet_node_seconds
    from {{ ref('fct_months_built') }} as months
    left join attempts on attempts.month = months.month
    left join fleet on fleet.month = months.month
    left join faults on faults.month = months.month

)

select
    periods.period_id,
    periods.kind,
    periods.first_month,
    periods.last_month,
    periods.window_months,
    count(*) as months_built,
    {{ node_failure_rate_sums() }},
    cast(sum(facts.fleet_faults) as bigint) as fleet_faults,
    cast(max(facts.fleet_nodes) as bigint) as fleet_nodes,
    cast(sum(facts.fleet_node_seconds) as bigint) / 86400e0 as fleet_node_days,
    cast(sum(case when periods.is_last_month then facts.all_failures else 0 end) as bigint) as last_month_failures,
    cast(sum(case when periods.is_last_month then facts.all_node_seconds else 0 end) as bigint) / 86400e0
        as last_month_node_days,
    cast(sum(case when periods.is_last_month then 0 else facts.all_failures end) as bigint) as earlier_failures,
    cast(sum(case when periods.is_last_month then 0 else facts.all_node_seconds end) as bigint) / 86400e0
        as earlier_node_days
from {{ period_rows('by_month') }}
group by periods.period_id, periods.kind, periods.first_month, periods.last_month, periods.window_months
