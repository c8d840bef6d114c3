-- One row per (attempt, month) for each attempt that touches the month: size bucket, outcome,
-- infra attribution, and its exposure and queue time inside the month. An attempt that runs across
-- a month end has a row in each month it touches; its outcome is only in the month of its End.

with attempts as (

    select * from {{ ref('int_attempts_month_scoped') }}

),

attributed as (

    select * from {{ ref('int_attempts_attributed') }}

),

buckets as (

    select * from {{ ref('job_size_buckets') }}

),

runs as (

    select
        month,
        attempt_id,
        job_run_id
    from {{ ref('int_job_runs') }}

),

classified as (

    select
        attempts.*,
        attributed.cause_category as matched_cause,
        attributed.failure_domain as matched_domain,
        attributed.n_matched_events,
        attributed.matched_categories,
        case
            when attempts.is_open then 'open'
            when attempts.slurm_state in ('NODE_FAIL', 'BOOT_FAIL') then 'infra_failed'
            when attempts.slurm_state in ('FAILED', 'REQUEUED') and attributed.attempt_id is not null
                then 'infra_failed'
            when attempts.slurm_state = 'COMPLETED' then 'completed'
            when attempts.slurm_state = 'FAILED' then 'failed'
            when attempts.slurm_state = 'OUT_OF_MEMORY' then 'oom'
            when attempts.slurm_state = 'PREEMPTED' then 'preempted'
            when attempts.slurm_state = 'REQUEUED' then 'requeued'
            when attempts.slurm_state = 'TIMEOUT' then 'timeout'
            when attempts.slurm_state = 'CANCELLED' then 'cancelled'
            when attempts.slurm_state = 'DEADLINE' then 'deadline'
            when
                attempts.slurm_state in (
                    'RUNNING', 'PENDING', 'SUSPENDED', 'REQUEUE_HOLD', 'REQUEUE_FED',
                    'RESIZING', 'SIGNALING', 'STAGE_OUT', 'CONFIGURING', 'COMPLETING'
                )
                then 'open'
            else 'unknown'
        end as outcome
    from attempts
    left join attributed on attributed.month = attempts.month and attributed.attempt_id = attempts.attempt_id

),

final as (

    select
        classified.attempt_id,
        classified.cluster,
        classified.month,
        classified.job_id,
        classified.job_id_raw,
        runs.job_run_id,
        classified.job_name,
        classified.user_name,
        classified.account,
        classified.partition,
        classified.slurm_state,
        classified.outcome,
        classified.is_open,
        classified.outcome = 'infra_failed' as is_infra_failure,
        case
            when classified.outcome <> 'infra_failed' then null
            else coalesce(classified.matched_cause, 'unattributed_node_failure')
        end as cause_category,
        case
            when classified.outcome <> 'infra_failed' then null
            else coalesce(classified.matched_domain, 'unknown')
        end as failure_domain,
        coalesce(classified.n_matched_events, 0) as n_matched_events,
        classified.matched_categories,
        classified.gpus,
        classified.size_gpus,
        classified.is_gpu_attempt,
        classified.n_nodes,
        buckets.size_bucket,
        buckets.bucket_order,
        classified.submit_at,
        classified.eligible_at,
        classified.start_at,
        classified.end_at,
        classified.queue_seconds,
        classified.runtime_seconds,
        classified.runtime_seconds / 3600e0 as runtime_hours,
        classified.runtime_seconds * classified.gpus as gpu_seconds,
        classified.runtime_seconds * classified.gpus / 3600e0 as gpu_hours,
        case when classified.is_gpu_attempt then classified.runtime_seconds * classified.n_nodes else 0 end
            as gpu_node_seconds,
        classified.source_file,
        classified.source_line
    from classified
    left join runs on runs.month = classified.month and runs.attempt_id = classified.attempt_id
    -- sized by size_gpus (int_attempts_month_scoped): a CPU-only attempt falls in bucket 0, which no
    -- GPU figure shows (they count is_gpu_attempt only)
    inner join buckets on classified.size_gpus between buckets.min_gpus and buckets.max_gpus

)

select * from final
