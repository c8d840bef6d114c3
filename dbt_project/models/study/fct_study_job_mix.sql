-- The study's job mix: attempts and GPU-hours per outcome and size bucket, summed from the
-- monthly job mix over the range, and each row's share of the range's attempts and GPU-hours. An
-- attempt across a month end counts in each month it touches (open in the earlier ones), as in
-- fct_study_totals.

with summed as (

    select
        outcome,
        size_bucket,
        bucket_order,
        cast(sum(attempts) as bigint) as attempts,
        cast(sum(gpu_seconds) as bigint) as gpu_seconds
    from {{ ref('fct_job_mix_monthly') }}
    where {{ in_study() }}
    group by outcome, size_bucket, bucket_order

)

select
    outcome,
    size_bucket,
    bucket_order,
    attempts,
    -- from whole GPU-seconds: exact in any order, whichever engine sums them
    gpu_seconds / 3600e0 as gpu_hours,
    attempts * 1e0 / sum(attempts) over () as attempt_share,
    case
        when sum(gpu_seconds) over () > 0 then gpu_seconds * 1e0 / sum(gpu_seconds) over ()
    end as gpu_hours_share
from summed
