-- Attempts that touch the report month, with their exposure clipped to it.
-- An attempt belongs to the month its End falls in; exposure is split at month boundaries, and
-- attempts still open at the month's end count their exposure but are never failures.

with attempts as (

    select * from {{ ref('stg_slurm__attempts') }}

),

bounds as (

    select month_start, month_end from {{ source('run', 'parameters') }}

),

scoped as (

    select
        attempts.*,
        (attempts.end_at is null or attempts.end_at >= bounds.month_end) as is_open,
        case when attempts.start_at is not null
            then greatest(attempts.start_at, bounds.month_start) end as exposure_start,
        case when attempts.start_at is not null
            then least(coalesce(attempts.end_at, bounds.month_end), bounds.month_end) end as exposure_end
    from attempts
    cross join bounds
    where (attempts.end_at is null or attempts.end_at >= bounds.month_start)
        and attempts.submit_at < bounds.month_end

)

select
    *,
    -- Whole seconds: integer sums are exact, so re-running a month gives identical figures.
    cast(greatest(coalesce({{ dbt.datediff('exposure_start', 'exposure_end', 'second') }}, 0), 0) as bigint)
        as runtime_seconds
from scoped
