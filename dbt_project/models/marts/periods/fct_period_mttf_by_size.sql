-- Observed MTTF per period (dim_periods) and size bucket: the in-month runtime of the bucket's
-- attempts (integer seconds, exact in any order), GPU-hours and GPU node-days, and its
-- infrastructure failures, summed over the period's months built, and MTTF = runtime / failures
-- (macro mttf_hours; null without a failure: the report then shows a bound). The buckets with
-- attempts in the period; GPU attempts only (is_gpu_attempt): no bucket 0. Each attempt counts
-- once, in the bucket of its final row in the period (fct_range_attempts); runtime is each month's
-- part, summed.

with by_month as (

    {{ range_sums(['size_bucket'], gpu_only=true) }}

),

summed as (

    select
        periods.period_id,
        facts.size_bucket,
        cast(sum(facts.attempts) as bigint) as attempts,
        cast(sum(facts.ended_attempts) as bigint) as ended_attempts,
        cast(sum(facts.runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(facts.gpu_seconds) as bigint) as gpu_seconds,
        cast(sum(facts.gpu_node_seconds) as bigint) as gpu_node_seconds,
        cast(sum(facts.infra_failures) as bigint) as infra_failures
    from {{ period_rows('by_month', as_final=true) }}
    group by periods.period_id, facts.size_bucket

)

select
    summed.period_id,
    summed.size_bucket,
    buckets.bucket_order,
    buckets.min_gpus,
    buckets.max_gpus,
    summed.attempts,
    summed.ended_attempts,
    summed.runtime_seconds,
    summed.runtime_seconds / 3600e0 as runtime_hours,
    summed.gpu_seconds,
    summed.gpu_seconds / 3600e0 as gpu_hours,
    summed.gpu_node_seconds / 86400e0 as gpu_node_days,
    summed.infra_failures,
    {{ mttf_hours('summed.runtime_seconds', 'summed.infra_failures') }} as mttf_hours
from summed
inner join {{ ref('job_size_buckets') }} as buckets on buckets.size_bucket = summed.size_bucket
