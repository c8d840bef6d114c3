-- Attempts and GPU-hours per month, outcome and size bucket (the job mix).

select
    month,
    outcome,
    size_bucket,
    bucket_order,
    count(*) as attempts,
    cast(sum(gpu_seconds) as bigint) as gpu_seconds,
    cast(sum(gpu_seconds) as bigint) / 3600e0 as gpu_hours
from {{ ref('fct_attempts') }}
where month = {{ run_parameter('month') }}
group by month, outcome, size_bucket, bucket_order
