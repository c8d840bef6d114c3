-- Observed MTTF per size bucket over each trailing window ending at the month: the buckets'
-- in-month runtime (integer seconds, exact in any order) and infrastructure failures summed over
-- the window's months built so far (macro trailing_window_rows), their ratio by macro mttf_hours.

with in_window as (

    {{ trailing_window_rows('fct_mttf_by_size_monthly', ['size_bucket', 'bucket_order', 'runtime_seconds', 'infra_failures']) }}

),

summed as (

    select
        month,
        window_months,
        size_bucket,
        bucket_order,
        cast(sum(runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(infra_failures) as bigint) as infra_failures
    from in_window
    group by month, window_months, size_bucket, bucket_order

)

select
    month,
    window_months,
    size_bucket,
    bucket_order,
    runtime_seconds / 3600e0 as runtime_hours,
    infra_failures,
    {{ mttf_hours('runtime_seconds', 'infra_failures') }} as mttf_hours
from summed
