-- Observed MTTF per size bucket and month: in-month runtime of the bucket's attempts divided by
-- the number of infra failures among them (null when there was none; the report then shows a bound).
-- GPU attempts only (is_gpu_attempt): a CPU-only attempt has no GPU size.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month in {{ run_months() }} and is_gpu_attempt

),

buckets as (

    select * from {{ ref('job_size_buckets') }}

),

aggregated as (

    select
        attempts.month,
        attempts.size_bucket,
        count(*) as attempts,
        cast(sum(case when attempts.is_open then 0 else 1 end) as bigint) as ended_attempts,
        cast(sum(attempts.runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(attempts.gpu_seconds) as bigint) / 3600e0 as gpu_hours,
        cast(sum(attempts.gpu_node_seconds) as bigint) / 86400e0 as gpu_node_days,
        cast(sum(case when attempts.is_infra_failure then 1 else 0 end) as bigint) as infra_failures
    from attempts
    group by attempts.month, attempts.size_bucket

)

select
    aggregated.month,
    aggregated.size_bucket,
    buckets.bucket_order,
    buckets.min_gpus,
    buckets.max_gpus,
    aggregated.attempts,
    aggregated.ended_attempts,
    aggregated.runtime_seconds,
    aggregated.runtime_seconds / 3600e0 as runtime_hours,
    aggregated.gpu_hours,
    aggregated.gpu_node_days,
    aggregated.infra_failures,
    {{ mttf_hours('aggregated.runtime_seconds', 'aggregated.infra_failures') }} as mttf_hours
from aggregated
inner join buckets on buckets.size_bucket = aggregated.size_bucket
