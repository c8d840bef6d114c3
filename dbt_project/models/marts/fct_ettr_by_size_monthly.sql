-- ETTR of the month's long job runs (fct_job_runs.is_ettr_run) by size bucket.

select
    month,
    size_bucket,
    bucket_order,
    count(*) as runs,
    {{ ordered_mean('ettr', 'job_run_id') }} as mean_ettr,
    {{ median('ettr') }} as median_ettr,
    min(ettr) as min_ettr
from {{ ref('fct_job_runs') }}
where month in {{ run_months() }} and is_ettr_run
group by month, size_bucket, bucket_order
