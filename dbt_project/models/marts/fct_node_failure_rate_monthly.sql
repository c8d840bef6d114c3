-- The month's node failure rate r_f under both definitions (docs/methodology.md "Node failure
-- rate"), as its counts: infrastructure failures and the GPU node-days they happened in. The
-- paper's definition counts attempts with more than paper_min_gpus GPUs; "all" every GPU attempt.
-- One row per month built, also for a month without attempts. The node-seconds are kept as
-- integers so that sums over months are exact in any order.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month = {{ run_parameter('month') }}

),

parameters as (

    select
        month,
        month_start
    from {{ source('run', 'parameters') }}

),

counted as (

    select
        cast(coalesce(sum(
            case when is_infra_failure and gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end
        ), 0) as bigint) as paper_failures,
        cast(coalesce(sum(
            case when gpus > {{ run_parameter('paper_min_gpus') }} then gpu_node_seconds else 0 end
        ), 0) as bigint) as paper_node_seconds,
        cast(coalesce(sum(case when is_infra_failure and gpus > 0 then 1 else 0 end), 0) as bigint) as all_failures,
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
    counted.all_node_seconds / 86400e0 as all_node_days
from parameters
cross join counted
