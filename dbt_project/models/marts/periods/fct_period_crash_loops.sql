-- Each period's (dim_periods) crash loops: the GPU jobs (a job id, its requeues included) whose
-- attempts ended interrupted, failed (FAILED, NODE_FAIL, BOOT_FAIL), requeued or preempted, at least
-- min_interruptions times in the period's months, ranked by their interruptions, with the GPU-hours
-- of those attempts inside the month each ended in. A period without a loop has one row, its job
-- columns null: its counts are 0, not unknown (docs/methodology.md "Crash loops").

{% set min_interruptions = 3 %}

with interrupted as (

    select
        month,
        cluster,
        job_id_raw,
        job_id,
        job_name,
        account,
        gpus,
        gpu_seconds,
        case when slurm_state in ('FAILED', 'NODE_FAIL', 'BOOT_FAIL') then 1 else 0 end as is_failure,
        case when slurm_state = 'REQUEUED' then 1 else 0 end as is_requeue,
        case when slurm_state = 'PREEMPTED' then 1 else 0 end as is_preemption
    from {{ ref('fct_attempts') }}
    where
        is_gpu_attempt
        and not is_open
        and slurm_state in ('FAILED', 'NODE_FAIL', 'BOOT_FAIL', 'REQUEUED', 'PREEMPTED')

),

-- a job that loops in a period has at least min_interruptions over every month built: only those
-- are spread over the periods (most interrupted jobs are interrupted once or twice)
candidates as (

    select
        cluster,
        job_id_raw
    from interrupted
    group by cluster, job_id_raw
    having count(*) >= {{ min_interruptions }}

),

looping as (

    select facts.*
    from interrupted as facts
    inner join candidates
        on facts.cluster = candidates.cluster and facts.job_id_raw = candidates.job_id_raw

),

by_job as (

    select
        periods.period_id,
        facts.cluster,
        facts.job_id_raw,
        max(facts.job_id) as job_id,
        max(facts.job_name) as job_name,
        max(facts.account) as account,
        max(facts.gpus) as gpus,
        count(*) as interruptions,
        cast(sum(facts.is_failure) as bigint) as failures,
        cast(sum(facts.is_requeue) as bigint) as requeues,
        cast(sum(facts.is_preemption) as bigint) as preemptions,
        sum(facts.gpu_seconds) / 3600e0 as gpu_hours
    from {{ period_rows('looping') }}
    group by periods.period_id, facts.cluster, facts.job_id_raw
    having count(*) >= {{ min_interruptions }}

),

ranked as (

    select
        by_job.*,
        row_number() over (
            partition by by_job.period_id order by by_job.interruptions desc, by_job.gpu_hours desc, by_job.job_id_raw asc
        ) as loop_rank,
        count(*) over (partition by by_job.period_id) as loop_jobs,
        sum(by_job.interruptions) over (partition by by_job.period_id) as loop_interruptions,
        sum(by_job.gpu_hours) over (partition by by_job.period_id) as loop_gpu_hours
    from by_job

)

select
    periods.period_id,
    ranked.loop_rank,
    ranked.job_id,
    ranked.job_name,
    ranked.account,
    ranked.gpus,
    ranked.interruptions,
    ranked.failures,
    ranked.requeues,
    ranked.preemptions,
    ranked.gpu_hours,
    {{ min_interruptions }} as min_interruptions,
    coalesce(ranked.loop_jobs, 0) as loop_jobs,
    coalesce(ranked.loop_interruptions, 0) as loop_interruptions,
    coalesce(ranked.loop_gpu_hours, 0e0) as loop_gpu_hours
from {{ ref('dim_periods') }} as periods
left join ranked on ranked.period_id = periods.period_id
