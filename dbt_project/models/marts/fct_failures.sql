-- One row per infrastructure failure of each month of the build: the attempt, its size, the winning cause with
-- the node and health event that decided it, and every category that matched in its window. GPU
-- attempts only (is_gpu_attempt): failures by cause and the lemon signals count these.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month in {{ run_months() }} and is_infra_failure and is_gpu_attempt

),

attributed as (

    select * from {{ ref('int_attempts_attributed') }}

)

select
    attempts.attempt_id,
    attempts.month,
    attempts.cluster,
    attempts.job_id,
    attempts.job_id_raw,
    attempts.user_name,
    attempts.slurm_state,
    attempts.end_at as failed_at,
    attempts.cause_category,
    attempts.failure_domain,
    attributed.cause_node,
    attributed.cause_event_at,
    attempts.n_matched_events,
    attempts.matched_categories,
    attempts.gpus,
    attempts.n_nodes,
    attempts.size_bucket,
    attempts.bucket_order,
    attempts.runtime_seconds,
    attempts.gpu_seconds / 3600e0 as gpu_hours
from attempts
left join attributed on attributed.month = attempts.month and attributed.attempt_id = attempts.attempt_id
