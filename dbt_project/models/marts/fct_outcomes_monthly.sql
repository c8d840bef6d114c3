-- The month's attempts and GPU-hours by outcome, each with its share of the month's attempts
-- and GPU-hours (the job mix of the report; fct_job_mix_monthly splits them by size too).

with by_outcome as (

    select
        month,
        outcome,
        cast(sum(attempts) as bigint) as attempts,
        cast(sum(gpu_seconds) as bigint) as gpu_seconds
    from {{ ref('fct_job_mix_monthly') }}
    where month = {{ run_parameter('month') }}
    group by month, outcome

)

select
    month,
    outcome,
    attempts,
    gpu_seconds / 3600e0 as gpu_hours,
    attempts * 1e0 / sum(attempts) over () as attempt_share,
    -- shares of integer sums: the same in any row order
    case when sum(gpu_seconds) over () > 0 then gpu_seconds * 1e0 / sum(gpu_seconds) over () end as gpu_hours_share
from by_outcome
