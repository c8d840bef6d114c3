-- Attempts that touch their month (each month of the build, run.months: an attempt is read from
-- its month's landing), with their exposure and queue time clipped to it
-- (docs: the month model). The month is observed from observed_start (its start, or where its
-- records begin when they begin later: a dump windowed by end time) up to period_end: its end, or
-- the time the records were dumped (as_of) if that came first. An attempt's outcome belongs to the month its
-- End falls in; one still running at the month's end (or at the dump) is open: it counts its
-- exposure up to period_end and is never a failure. The same attempt appears again in the next
-- month's records and is counted there from that month's start: nothing is counted twice.
-- Here, and only here, the rule of which attempts the GPU figures count (docs/methodology.md
-- "GPU attempts"): an attempt is sized by its allocated GPUs, or by the GPUs it asked for when it
-- got none (a job cancelled while pending); a GPU attempt is one of size > 0. Every GPU figure of
-- the marts (r_f, MTTF by size, ETTR, lost goodput, breakdowns, job mix, lemon signals) filters on
-- is_gpu_attempt; CPU-only attempts are only counted (fct_period_totals.cpu_only_attempts).

with attempts as (

    select * from {{ ref('stg_slurm__attempts') }}

),

bounds as (

    select
        month,
        month_start,
        month_end,
        observed_start,
        period_end
    from {{ source('run', 'months') }}

),

-- Only the columns the marts read: each column of this table is written to the warehouse file.
scoped as (

    select
        attempts.month,
        attempts.attempt_id,
        attempts.cluster,
        attempts.job_id,
        attempts.job_id_raw,
        attempts.job_name,
        attempts.user_name,
        attempts.account,
        attempts.partition,
        attempts.qos,
        attempts.slurm_state,
        attempts.gpus,
        attempts.req_gpus,
        attempts.n_nodes,
        case
            when coalesce(attempts.gpus, 0) = 0 and coalesce(attempts.req_gpus, 0) > 0
                then attempts.req_gpus
            else coalesce(attempts.gpus, 0)
        end as size_gpus,
        attempts.submit_at,
        attempts.eligible_at,
        attempts.start_at,
        attempts.end_at,
        attempts.admin_comment,
        attempts.source_file,
        attempts.source_line,
        (attempts.end_at is null or attempts.end_at >= bounds.month_end) as is_open,
        case
            when attempts.start_at is not null
                then greatest(attempts.start_at, bounds.observed_start)
        end as exposure_start,
        case
            when attempts.start_at is not null
                then least(coalesce(attempts.end_at, bounds.period_end), bounds.period_end)
        end as exposure_end,
        -- queued from Eligible until Start (or until period_end if not started by then)
        case
            when attempts.eligible_at is not null
                then greatest(attempts.eligible_at, bounds.observed_start)
        end as queue_start,
        case
            when attempts.eligible_at is not null
                then least(coalesce(attempts.start_at, bounds.period_end), bounds.period_end)
        end as queue_end
    from attempts
    inner join bounds on bounds.month = attempts.month
    where
        (attempts.end_at is null or attempts.end_at >= bounds.month_start)
        and attempts.submit_at < bounds.month_end

)

select
    month,
    attempt_id,
    cluster,
    job_id,
    job_id_raw,
    job_name,
    user_name,
    account,
    partition,
    qos,
    slurm_state,
    gpus,
    req_gpus,
    n_nodes,
    size_gpus,
    size_gpus > 0 as is_gpu_attempt,
    submit_at,
    eligible_at,
    start_at,
    end_at,
    admin_comment,
    source_file,
    source_line,
    is_open,
    exposure_start,
    exposure_end,
    -- Whole seconds: integer sums are exact, so re-running a month gives identical figures.
    cast(greatest(coalesce({{ dbt.datediff('exposure_start', 'exposure_end', 'second') }}, 0), 0) as bigint)
        as runtime_seconds,
    cast(greatest(coalesce({{ dbt.datediff('queue_start', 'queue_end', 'second') }}, 0), 0) as bigint)
        as queue_seconds
from scoped
