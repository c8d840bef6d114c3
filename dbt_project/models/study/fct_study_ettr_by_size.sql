-- The study's ETTR by size bucket (macro ettr_by_size): the long job runs that ended in the
-- range's months, each with its whole history (fct_job_run_histories.is_ettr_run; a run that began
-- before the range brings its earlier months), for every run (run_set 'all') and for the
-- highest-priority ones ('priority', as each run's month selected them), in the form of
-- fct_ettr_by_size_ended_monthly.

with runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where {{ in_study() }} and is_ettr_run

),

by_size as (

    {{ ettr_by_size('runs') }}

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
    stddev_ettr,
    median_ettr,
    min_ettr
from by_size
