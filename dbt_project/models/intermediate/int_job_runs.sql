-- Which job run each attempt of its month belongs to (the runs of each month of the build apart) (docs/methodology.md "Units"). A job is every attempt
-- with one job id; a job run is a job plus the later jobs chained to it: same user, account and
-- job name, submitted at most run_link_gap_minutes after the previous job ended other than
-- COMPLETED. A gap of 0 switches chaining off (each job is its own run).

with attempts as (

    select * from {{ ref('int_attempts_month_scoped') }}

),

jobs as (

    select
        month,
        cluster,
        job_id_raw,
        min(user_name) as user_name,
        min(account) as account,
        min(job_name) as job_name,
        min(submit_at) as first_submit_at,
        max(end_at) as last_end_at,
        -- the state of the job's last attempt decides whether a later job continues its run
        {{ value_at_max('slurm_state', 'submit_at') }} as last_state,
        bool_or(is_open) as is_open
    from attempts
    group by month, cluster, job_id_raw

),

ordered as (

    select
        *,
        lag(last_end_at) over chain as previous_end_at,
        lag(last_state) over chain as previous_state,
        lag(is_open) over chain as previous_open
    from jobs
    window chain as (partition by month, cluster, user_name, account, job_name order by first_submit_at, job_id_raw)

),

linked as (

    select
        ordered.*,
        coalesce(
            parameters.run_link_gap_minutes > 0
            and not ordered.previous_open
            and ordered.previous_state <> 'COMPLETED'
            and ordered.first_submit_at >= ordered.previous_end_at
            and ordered.first_submit_at
            <= {{ dbt.dateadd('minute', 'parameters.run_link_gap_minutes', 'ordered.previous_end_at') }},
            false
        ) as continues_run
    from ordered
    cross join {{ source('run', 'parameters') }} as parameters

),

runs as (

    select
        *,
        -- a run is named after its first job: the last job so far that did not continue a run
        -- (one window, the same as `ordered`'s, so the jobs are sorted once)
        {{ last_value_ignoring_nulls('case when not continues_run then job_id_raw end') }} over (
            partition by month, cluster, user_name, account, job_name
            order by first_submit_at, job_id_raw
            rows between unbounded preceding and current row
        ) as run_first_job_id_raw
    from linked

)

select
    attempts.month,
    attempts.attempt_id,
    {{ dbt.hash(dbt.concat(["runs.cluster", "'|'", "runs.run_first_job_id_raw"])) }} as job_run_id,
    runs.run_first_job_id_raw,
    runs.continues_run as job_continues_run,
    -- the QOS reaches the job runs from here (fct_attempts does not carry it)
    attempts.qos,
    -- attempts of a job differ in submit time, so exactly one is its first: counting these counts
    -- a run's jobs without a distinct count (a second hash table over every attempt)
    attempts.submit_at = runs.first_submit_at as is_job_first_attempt
from attempts
inner join runs
    on
        runs.month = attempts.month
        and runs.cluster = attempts.cluster
        and runs.job_id_raw = attempts.job_id_raw
