-- The study's observed MTTF per size bucket: the in-month runtime, GPU-hours and GPU node-days of
-- the bucket's attempts and its infrastructure failures summed from the monthly mart over the
-- range, and MTTF = runtime / failures (null without a failure). Every GPU bucket of the seed
-- (macro gpu_size_buckets: not bucket 0, the CPU-only attempts') has a row (zeros where nothing ran), so that clusters and ranges line up bucket by bucket.

with summed as (

    select
        size_bucket,
        cast(sum(attempts) as bigint) as attempts,
        cast(sum(runtime_seconds) as bigint) as runtime_seconds,
        sum(gpu_hours) as gpu_hours,
        sum(gpu_node_days) as gpu_node_days,
        cast(sum(infra_failures) as bigint) as infra_failures
    from {{ ref('fct_mttf_by_size_monthly') }}
    where {{ in_study() }}
    group by size_bucket

)

select
    buckets.size_bucket,
    buckets.bucket_order,
    buckets.min_gpus,
    buckets.max_gpus,
    coalesce(summed.attempts, 0) as attempts,
    coalesce(summed.runtime_seconds, 0) / 3600e0 as runtime_hours,
    coalesce(summed.gpu_hours, 0) as gpu_hours,
    coalesce(summed.gpu_node_days, 0) as gpu_node_days,
    coalesce(summed.infra_failures, 0) as infra_failures,
    {{ mttf_hours('summed.runtime_seconds', 'summed.infra_failures') }} as mttf_hours
from {{ gpu_size_buckets() }} as buckets
left join summed on summed.size_bucket = buckets.size_bucket
