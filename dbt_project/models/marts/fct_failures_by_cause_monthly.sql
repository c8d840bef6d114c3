-- Infrastructure failures of the month by cause: counts (by the Slurm state the attempt ended
-- in), each cause's share of all failures, and its rate per 1000 GPU node-days and per million GPU-hours of the month.

with failures as (

    select * from {{ ref('fct_failures') }}
    where month in {{ run_months() }}

),

categories as (

    select * from {{ ref('failure_categories') }}

),

exposure as (

    select
        rates.month,
        rates.all_node_days,
        totals.gpu_hours
    from {{ ref('fct_node_failure_rate_monthly') }} as rates
    inner join {{ ref('fct_month_totals') }} as totals on totals.month = rates.month
    where rates.month in {{ run_months() }}

),

by_cause as (

    select
        month,
        cause_category,
        count(*) as failures,
        cast(sum(case when gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end) as bigint) as failures_paper_jobs,
        cast(sum(case when slurm_state = 'NODE_FAIL' then 1 else 0 end) as bigint) as node_fail,
        cast(sum(case when slurm_state = 'FAILED' then 1 else 0 end) as bigint) as failed,
        cast(sum(case when slurm_state = 'REQUEUED' then 1 else 0 end) as bigint) as requeued
    from failures
    group by month, cause_category

)

select
    by_cause.month,
    by_cause.cause_category,
    categories.failure_domain,
    by_cause.failures,
    by_cause.failures_paper_jobs,
    by_cause.node_fail,
    by_cause.failed,
    by_cause.requeued,
    {{ share('by_cause.failures', 'sum(by_cause.failures) over (partition by by_cause.month)') }} as share_of_failures,
    exposure.all_node_days as node_days,
    {{ failure_rates('by_cause.failures', 'exposure.all_node_days', 'exposure.gpu_hours') }}
from by_cause
inner join categories on categories.category = by_cause.cause_category
inner join exposure on exposure.month = by_cause.month
