-- The study's range by account and by partition (fct_breakdowns_monthly over the range): each
-- key's infrastructure failures, lost GPU-hours and GPU-hours summed over the months, ranked by
-- lost GPU-hours; ETTR over the long job runs that ended in the range, from the runs themselves
-- (fct_job_run_histories), not from the months' means.

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

    select
        month,
        job_run_id,
        ettr,
        {{ breakdown_key('account') }} as account_key,
        {{ breakdown_key('partition') }} as partition_key
    from {{ ref('fct_job_run_histories') }}
    where {{ in_study() }} and is_ettr_run

),

keyed_runs as (

    select
        'account' as dimension,
        account_key as key,
        month,
        job_run_id,
        ettr
    from runs
    union all
    select
        'partition' as dimension,
        partition_key as key,
        month,
        job_run_id,
        ettr
    from runs

),

run_figures as (

    select
        dimension,
        key,
        count(*) as ettr_runs,
        -- a job run's id is unique within its month: (month, id) orders the range's runs
        {{ ordered_mean('ettr', dbt.concat(['month', "'|'", 'job_run_id'])) }} as mean_ettr
    from keyed_runs
    group by dimension, key

)

select
    monthly.dimension,
    monthly.key,
    row_number() over (
        partition by monthly.dimension
        order by monthly.lost_gpu_hours desc, monthly.infra_failures desc, monthly.key asc
    ) as rank,
    monthly.infra_failures,
    monthly.lost_gpu_hours,
    monthly.gpu_hours,
    cast(coalesce(run_figures.ettr_runs, 0) as bigint) as ettr_runs,
    run_figures.mean_ettr
from monthly
left join run_figures
    on
        run_figures.dimension = monthly.dimension
        and run_figures.key = monthly.key
