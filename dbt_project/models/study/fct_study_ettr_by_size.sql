-- The study's ETTR by size bucket: the long job runs that ended in the range's months, each with
-- its whole history (fct_job_run_histories.is_ettr_run; a run that began before the range brings
-- its earlier months), for every run (run_set 'all') and for the highest-priority ones
-- ('priority', as each run's month selected them), in the form of fct_ettr_by_size_ended_monthly.

with runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where {{ in_study() }} and is_ettr_run

),

sets as (

    {{ ettr_run_sets('runs') }}

),

-- the ordered means first, the spread from them after (as the monthly mart, so that both engines
-- give the same figures); a run's key is its month and its id in that month
means as (

    select
        sets.run_set,
        sets.size_bucket,
        sets.bucket_order,
        buckets.min_gpus,
        buckets.max_gpus,
        count(*) as runs,
        {{ ordered_mean('sets.gpus', 'sets.month || sets.job_run_id') }} as mean_gpus,
        {{ ordered_mean('sets.ettr', 'sets.month || sets.job_run_id') }} as mean_ettr,
        {{ ordered_mean('sets.ettr * sets.ettr', 'sets.month || sets.job_run_id') }} as mean_ettr_squared,
        {{ median('sets.ettr') }} as median_ettr,
        min(sets.ettr) as min_ettr
    from sets
    inner join {{ ref('job_size_buckets') }} as buckets on buckets.size_bucket = sets.size_bucket
    group by sets.run_set, sets.size_bucket, sets.bucket_order, buckets.min_gpus, buckets.max_gpus

)

select
    run_set,
    size_bucket,
    bucket_order,
    min_gpus,
    max_gpus,
    runs,
    mean_gpus,
    mean_ettr,
    {{ ettr_stddev_from_means() }} as stddev_ettr,
    median_ettr,
    min_ettr
from means
