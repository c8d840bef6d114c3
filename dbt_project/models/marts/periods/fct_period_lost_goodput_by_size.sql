-- Each period's (dim_periods) lost goodput by size bucket (docs/methodology.md "Lost goodput",
-- macro lost_goodput): min(runtime, lost_work_cap_minutes) x GPUs of the period's infrastructure
-- failures (first order, by the failed attempt's bucket) and of the attempts preempted to make room
-- for their restarts (second order, fct_second_order_preemptions, by the preempted attempt's bucket),
-- beside the bucket's GPU-hours over the period. Every GPU bucket of the seed (macro
-- gpu_size_buckets) has a row in every period (zeros where nothing ran); the buckets add up to
-- fct_period_lost_goodput (tests/assert_lost_goodput_by_size_adds_up.sql).

with lost_work as (

    select
        periods.period_id,
        facts.*
    from {{ period_rows('(' ~ lost_work() ~ ')') }}

),

lost as (

    {{ lost_goodput('lost_work', ['period_id', 'size_bucket']) }}

),

exposure as (

    select
        period_id,
        size_bucket,
        gpu_seconds
    from {{ ref('fct_period_mttf_by_size') }}

),

by_size as (

    select
        periods.period_id,
        buckets.size_bucket,
        buckets.bucket_order,
        coalesce(lost.infra_failures, 0) as infra_failures,
        coalesce(lost.first_order_gpu_hours, 0) as first_order_gpu_hours,
        coalesce(lost.second_order_preemptions, 0) as second_order_preemptions,
        coalesce(lost.second_order_gpu_hours, 0) as second_order_gpu_hours,
        coalesce(lost.lost_gpu_hours, 0) as lost_gpu_hours,
        coalesce(exposure.gpu_seconds, 0) / 3600e0 as gpu_hours
    from {{ ref('dim_periods') }} as periods
    cross join {{ gpu_size_buckets() }} as buckets
    left join lost on lost.period_id = periods.period_id and lost.size_bucket = buckets.size_bucket
    left join exposure on exposure.period_id = periods.period_id and exposure.size_bucket = buckets.size_bucket

)

select
    period_id,
    size_bucket,
    bucket_order,
    infra_failures,
    first_order_gpu_hours,
    second_order_preemptions,
    second_order_gpu_hours,
    lost_gpu_hours,
    gpu_hours,
    {{ share('lost_gpu_hours', 'gpu_hours') }} as share_of_gpu_hours
from by_size
