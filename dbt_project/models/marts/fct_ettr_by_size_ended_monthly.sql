-- ETTR of the long job runs that ended in the month, each with its whole history
-- (fct_job_run_histories.is_ettr_run), by size bucket: for every run (run_set 'all') and for the
-- highest-priority runs ('priority'), the paper's comparison with E[ETTR] (its Fig. 9). The mean's
-- spread (stddev_ettr) gives its interval; mean_gpus the size E[ETTR] is taken at.

with runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where month = {{ run_parameter('month') }} and is_ettr_run

),

sets as (

    {{ ettr_run_sets('runs') }}

),

-- the ordered means first, the spread from them after: one value of each mean, whichever engine
-- (Spark evaluated the means inside one expression of aggregates to a different last bit)
means as (

    select
        sets.month,
        sets.run_set,
        sets.size_bucket,
        sets.bucket_order,
        buckets.min_gpus,
        buckets.max_gpus,
        min(sets.priority_qos) as priority_qos,
        min(sets.priority_partition) as priority_partition,
        count(*) as runs,
        count(*) filter (where sets.months > 1) as runs_from_earlier_months,
        {{ ordered_mean('sets.gpus', 'sets.job_run_id') }} as mean_gpus,
        {{ ordered_mean('sets.ettr', 'sets.job_run_id') }} as mean_ettr,
        {{ ordered_mean('sets.ettr * sets.ettr', 'sets.job_run_id') }} as mean_ettr_squared,
        {{ median('sets.ettr') }} as median_ettr,
        min(sets.ettr) as min_ettr
    from sets
    inner join {{ ref('job_size_buckets') }} as buckets on buckets.size_bucket = sets.size_bucket
    group by sets.month, sets.run_set, sets.size_bucket, sets.bucket_order, buckets.min_gpus, buckets.max_gpus

)

select
    month,
    run_set,
    size_bucket,
    bucket_order,
    min_gpus,
    max_gpus,
    priority_qos,
    priority_partition,
    runs,
    runs_from_earlier_months,
    mean_gpus,
    mean_ettr,
    {{ ettr_stddev_from_means() }} as stddev_ettr,
    median_ettr,
    min_ettr
from means
