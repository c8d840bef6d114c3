-- Observed MTTF per size bucket over each trailing window ending at the month: the buckets'
-- in-month runtime (integer seconds, exact in any order) and infrastructure failures summed over
-- the window's months built so far.

with by_size as (

    select * from {{ ref('fct_mttf_by_size_monthly') }}

),

window_months as (

    {{ trailing_window_months() }}

),

in_window as (

    select
        window_months.month,
        window_months.window_months,
        by_size.size_bucket,
        by_size.bucket_order,
        by_size.runtime_seconds,
        by_size.infra_failures
    from window_months
    inner join by_size on by_size.month = window_months.window_month

),

summed as (

    select
        month,
        window_months,
        size_bucket,
        bucket_order,
        cast(sum(runtime_seconds) as bigint) / 3600e0 as runtime_hours,
        cast(sum(infra_failures) as bigint) as infra_failures
    from in_window
    group by month, window_months, size_bucket, bucket_order

)

select
    summed.*,
    case when summed.infra_failures > 0 then summed.runtime_hours / summed.infra_failures end as mttf_hours
from summed
