-- One row per job run with attempts in the month (int_job_runs chains jobs into runs): its jobs
-- and attempts, size, in-month runtime, the time it waited in the queue, interruptions by the
-- infrastructure and by preemption, and the outcome of its last attempt.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month = {{ run_parameter('month') }}

),

runs as (

    select * from {{ ref('int_job_runs') }}

),

buckets as (

    select * from {{ ref('job_size_buckets') }}

),

aggregated as (

    select
        runs.job_run_id,
        attempts.month,
        min(attempts.cluster) as cluster,
        min(runs.run_first_job_id_raw) as first_job_id_raw,
        min(attempts.user_name) as user_name,
        min(attempts.account) as account,
        min(attempts.job_name) as job_name,
        count(*) filter (where runs.is_job_first_attempt) as jobs,
        count(*) as attempts,
        min(attempts.submit_at) as first_submit_at,
        min(attempts.start_at) as first_start_at,
        max(attempts.end_at) as last_end_at,
        max(attempts.gpus) as gpus,
        cast(sum(attempts.runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(coalesce(attempts.queue_seconds, 0)) as bigint) as queue_seconds,
        cast(sum(attempts.gpu_seconds) as bigint) as gpu_seconds,
        cast(sum(case when attempts.is_infra_failure then 1 else 0 end) as bigint) as infra_interruptions,
        cast(sum(case when attempts.outcome = 'preempted' then 1 else 0 end) as bigint) as preemptions,
        {{ value_at_max('attempts.outcome', 'attempts.submit_at') }} as final_outcome,
        bool_or(attempts.is_open) as is_open
    from attempts
    inner join runs on runs.attempt_id = attempts.attempt_id
    group by runs.job_run_id, attempts.month

)

select
    aggregated.*,
    aggregated.runtime_seconds / 3600.0 as runtime_hours,
    aggregated.gpu_seconds / 3600.0 as gpu_hours,
    buckets.size_bucket,
    buckets.bucket_order
from aggregated
inner join buckets on aggregated.gpus between buckets.min_gpus and buckets.max_gpus
