-- Infrastructure failures of the month by cause: counts, the GPU-hours the failed attempts had
-- run in the month, and each cause's share of all failures.

with failures as (

    select * from {{ ref('fct_failures') }}
    where month = {{ run_parameter('month') }}

),

categories as (

    select * from {{ ref('failure_categories') }}

),

by_cause as (

    select
        month,
        cause_category,
        count(*) as failures,
        cast(sum(case when gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end) as bigint) as failures_paper_jobs,
        sum(gpu_hours) as failed_gpu_hours
    from failures
    group by month, cause_category

)

select
    by_cause.month,
    by_cause.cause_category,
    categories.failure_domain,
    categories.cause_priority,
    by_cause.failures,
    by_cause.failures_paper_jobs,
    by_cause.failed_gpu_hours,
    by_cause.failures * 1.0 / sum(by_cause.failures) over () as share_of_failures
from by_cause
inner join categories on categories.category = by_cause.cause_category
