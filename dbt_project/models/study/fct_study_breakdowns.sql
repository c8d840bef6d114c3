-- The study's range by account and by partition (fct_breakdowns_monthly over the range): each
-- key's infrastructure failures, lost GPU-hours and GPU-hours summed over the months, ranked by
-- lost GPU-hours (macro breakdowns); ETTR over the long job runs that ended in the range, from the
-- runs themselves (fct_job_run_histories), not from the months' means.

with monthly as (

    select
        dimension,
        key,
        cast(sum(infra_failures) as bigint) as infra_failures,
        sum(lost_gpu_hours) as lost_gpu_hours,
        sum(gpu_hours) as gpu_hours
    from {{ ref('fct_breakdowns_monthly') }}
    where {{ in_study() }}
    group by dimension, key

),

runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where {{ in_study() }} and is_ettr_run

)

{{ breakdowns('monthly', 'runs') }}
