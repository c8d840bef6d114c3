-- One row per job run and month of the build it has attempts in (int_job_runs chains jobs into runs): its jobs
-- and attempts, size, in-month runtime, the time it waited in the queue, its interruptions, the
-- outcome of its last attempt, and its ETTR (docs/methodology.md "ETTR of a job run").
-- An interruption is an attempt that ended infra_failed, preempted or requeued: each costs the
-- restart overhead u0 and half a checkpoint interval of work, at most what the attempt had run.
-- GPU attempts only (is_gpu_attempt): a run of CPU-only jobs has no row, and no ETTR.

{%- set interruption_outcomes = "('infra_failed', 'preempted', 'requeued')" -%}
{%- set lost_per_interruption -%}
    ({{ run_parameter('restart_overhead_minutes') }} + {{ run_parameter('ckpt_interval_minutes') }} / 2) * 60
{%- endset %}

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month in {{ run_months() }} and is_gpu_attempt

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
        min(attempts.start_at) as first_start_at,
        max(attempts.end_at) as last_end_at,
        -- sized as its attempts are (size_gpus: a run whose jobs were cancelled while pending by their request)
        max(attempts.size_gpus) as gpus,
        cast(sum(attempts.runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(coalesce(attempts.queue_seconds, 0)) as bigint) as queue_seconds,
        cast(sum(case when attempts.outcome in {{ interruption_outcomes }} then 1 else 0 end) as bigint)
            as interruptions,
        cast(coalesce(sum(
            case
                when attempts.outcome in {{ interruption_outcomes }}
                    then least(attempts.runtime_seconds, {{ lost_per_interruption }})
            end
        ), 0) as bigint) as lost_seconds,
        {{ value_at_max('attempts.outcome', 'attempts.submit_at') }} as final_outcome,
        -- where the run's last attempt ran: the ETTR table of the highest-priority runs selects on these
        {{ value_at_max('runs.qos', 'attempts.submit_at') }} as qos,
        {{ value_at_max('attempts.partition', 'attempts.submit_at') }} as partition,
        -- links the run to its part in the next month (fct_job_run_histories): a run still going
        -- at the month's end continues there under the job it was running
        {{ value_at_max('attempts.job_id_raw', 'attempts.submit_at') }} as last_job_id_raw,
        bool_or(attempts.is_open) as is_open
    from attempts
    inner join runs on runs.month = attempts.month and runs.attempt_id = attempts.attempt_id
    group by runs.job_run_id, attempts.month

),

productive as (

    select
        aggregated.*,
        greatest(
            aggregated.runtime_seconds - aggregated.lost_seconds
            - {{ run_parameter('ckpt_write_minutes') }} / {{ run_parameter('ckpt_interval_minutes') }}
            * aggregated.runtime_seconds,
            0
        ) as productive_seconds
    from aggregated

)

select
    productive.*,
    productive.runtime_seconds / 3600e0 as runtime_hours,
    {{ ettr('productive.productive_seconds', 'productive.runtime_seconds', 'productive.queue_seconds') }} as ettr,
    -- the runs the ETTR summary takes: long enough, and with time to measure
    productive.runtime_seconds >= {{ run_parameter('ettr_min_run_hours') }} * 3600
    and productive.runtime_seconds + productive.queue_seconds > 0 as is_ettr_run,
    buckets.size_bucket,
    buckets.bucket_order
from productive
inner join buckets on productive.gpus between buckets.min_gpus and buckets.max_gpus
