-- The study's lost goodput by size bucket (docs/methodology.md "Lost goodput"): min(runtime,
-- lost_work_cap_minutes) x GPUs of the range's infrastructure failures (first order, by the
-- failed attempt's bucket) and of the attempts preempted to make room for their restarts (second
-- order, fct_second_order_preemptions, by the preempted attempt's bucket), beside the bucket's
-- GPU-hours over the range. Every bucket of the seed has a row (zeros where nothing ran); the
-- buckets add up to fct_study_totals' lost goodput (tests/assert_study_lost_goodput_adds_up.sql).

with first_order as (

    select
        size_bucket,
        count(*) as infra_failures,
        {{ lost_work_gpu_hours() }} as lost_gpu_hours
    from {{ ref('fct_attempts') }}
    where {{ in_study() }} and is_infra_failure
    group by size_bucket

),

-- a preemption's row has no bucket: its attempt's row of the same month has
second_order as (

    select
        attempts.size_bucket,
        count(*) as second_order_preemptions,
        {{ lost_work_gpu_hours('preemptions.runtime_seconds', 'preemptions.gpus') }} as lost_gpu_hours
    from {{ ref('fct_second_order_preemptions') }} as preemptions
    inner join {{ ref('fct_attempts') }} as attempts
        on attempts.attempt_id = preemptions.attempt_id and attempts.month = preemptions.month
    where {{ in_study('preemptions.month') }}
    group by attempts.size_bucket

),

exposure as (

    select
        size_bucket,
        cast(sum(gpu_seconds) as bigint) as gpu_seconds
    from {{ ref('fct_job_mix_monthly') }}
    where {{ in_study() }}
    group by size_bucket

),

by_size as (

    select
        buckets.size_bucket,
        buckets.bucket_order,
        coalesce(first_order.infra_failures, 0) as infra_failures,
        coalesce(first_order.lost_gpu_hours, 0) as first_order_gpu_hours,
        coalesce(second_order.second_order_preemptions, 0) as second_order_preemptions,
        coalesce(second_order.lost_gpu_hours, 0) as second_order_gpu_hours,
        coalesce(exposure.gpu_seconds, 0) / 3600e0 as gpu_hours
    from {{ ref('job_size_buckets') }} as buckets
    left join first_order on first_order.size_bucket = buckets.size_bucket
    left join second_order on second_order.size_bucket = buckets.size_bucket
    left join exposure on exposure.size_bucket = buckets.size_bucket

)

select
    size_bucket,
    bucket_order,
    infra_failures,
    first_order_gpu_hours,
    second_order_preemptions,
    second_order_gpu_hours,
    first_order_gpu_hours + second_order_gpu_hours as lost_gpu_hours,
    gpu_hours,
    case when gpu_hours > 0 then (first_order_gpu_hours + second_order_gpu_hours) / gpu_hours end
        as share_of_gpu_hours
from by_size
