-- The month in totals: attempts, GPU-hours, infrastructure failures, attempts still running at
-- the dump, attempts whose Slurm state the taxonomy does not know, and the health events of the
-- month with the share no taxonomy rule classified. One row per month built.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month = {{ run_parameter('month') }}

),

health_events as (

    select * from {{ ref('fct_health_events') }}
    where month = {{ run_parameter('month') }}

),

attempt_totals as (

    select
        count(*) as attempts,
        cast(coalesce(sum(gpu_seconds), 0) as bigint) / 3600e0 as gpu_hours,
        cast(coalesce(sum(case when is_infra_failure then 1 else 0 end), 0) as bigint) as infra_failures,
        cast(coalesce(sum(case when is_open then 1 else 0 end), 0) as bigint) as open_attempts,
        cast(coalesce(sum(case when outcome = 'unknown' then 1 else 0 end), 0) as bigint) as unknown_states
    from attempts

),

event_totals as (

    select
        count(*) as health_events,
        cast(coalesce(sum(case when category = 'unclassified' then 1 else 0 end), 0) as bigint)
            as unclassified_health_events
    from health_events

)

select
    parameters.month,
    attempt_totals.attempts,
    attempt_totals.gpu_hours,
    attempt_totals.infra_failures,
    attempt_totals.open_attempts,
    attempt_totals.unknown_states,
    event_totals.health_events,
    event_totals.unclassified_health_events,
    {{ share('event_totals.unclassified_health_events', 'event_totals.health_events') }} as unclassified_share
from {{ source('run', 'parameters') }} as parameters
cross join attempt_totals
cross join event_totals
