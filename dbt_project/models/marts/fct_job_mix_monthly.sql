-- Attempts and GPU-hours per month, outcome and size bucket (the job mix): GPU attempts only
-- (is_gpu_attempt; fct_month_totals counts the CPU-only ones).

select
    month,
    outcome,
    size_bucket,
    bucket_order,
    count(*) as attempts,
    cast(sum(gpu_seconds) as bigint) as gpu_seconds,
    cast(sum(gpu_seconds) as bigint) / 3600e0 as gpu_hours
from {{ ref('fct_attempts') }}
where month in {{ run_months() }} and is_gpu_attempt
group by month, outcome, size_bucket, bucket_order
