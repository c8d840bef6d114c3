-- The month's attempts and GPU-hours by outcome, each with its share of the month's attempts
-- and GPU-hours (the job mix of the report; fct_job_mix_monthly splits them by size too).

with by_outcome as (

    select
        month,
        outcome,
        cast(sum(attempts) as bigint) as attempts,
        cast(sum(gpu_seconds) as bigint) / 3600.0 as gpu_hours
    from {{ ref('fct_job_mix_monthly') }}
    where month = {{ run_parameter('month') }}
    group by month, outcome

)

select
    month,
    outcome,
    attempts,
    gpu_hours,
    attempts * 1.0 / sum(attempts) over () as attempt_share,
    case when sum(gpu_hours) over () > 0 then gpu_hours / sum(gpu_hours) over () end as gpu_hours_share
from by_outcome
