-- Each period's (dim_periods) infrastructure failures, lost GPU-hours, GPU-hours and ETTR by account
-- and by partition (docs/metrics.md `breakdowns`): one row per account and per partition with
-- attempts in the period, ranked by lost GPU-hours (macro breakdowns). Each month's figures first,
-- then their sums over the period's months built (of whole GPU-seconds: the same in any order). Lost GPU-hours are the paper's estimate as in
-- fct_period_lost_goodput: each infrastructure failure's (first order) plus each attempt preempted
-- for a restart after a failure (second order, fct_second_order_preemptions), the latter charged to
-- the preempted attempt's own account and partition, whose work was lost. So each dimension's rows
-- add up to the period's figures. ETTR is over the long job runs that ended in the period
-- (fct_job_run_histories.is_ettr_run), from the runs themselves, under the run's account and the
-- partition of its last attempt. GPU attempts only (is_gpu_attempt): a key with no GPU-hours and no
-- infrastructure failure of a GPU attempt in a month has no row of that month.

with attempts as (

    select
        attempts.month,
        attempts.account,
        attempts.partition,
        attempts.is_infra_failure,
        -- the attempts whose work counts as lost: the failures and the second-order preemptions
        attempts.is_infra_failure or preempted.attempt_id is not null as is_lost_work,
        attempts.runtime_seconds,
        attempts.gpus,
        attempts.gpu_seconds
    from {{ ref('fct_attempts') }} as attempts
    left join {{ ref('fct_second_order_preemptions') }} as preempted
        on preempted.attempt_id = attempts.attempt_id and preempted.month = attempts.month
    where attempts.is_gpu_attempt

),

keyed_attempts as (

    {{ by_breakdown_key('attempts', ['month', 'is_infra_failure', 'is_lost_work', 'runtime_seconds', 'gpus', 'gpu_seconds']) }}

),

by_month as (

    select
        month,
        dimension,
        key,
        cast(sum(case when is_infra_failure then 1 else 0 end) as bigint) as infra_failures,
        -- the other attempts count with no GPUs (not with a null runtime: least() skips nulls)
        {{ lost_work_gpu_seconds(gpus='case when is_lost_work then gpus else 0 end') }} as lost_gpu_seconds,
        cast(coalesce(sum(gpu_seconds), 0) as bigint) as gpu_seconds
    from keyed_attempts
    group by month, dimension, key
    -- the failures stay (each dimension's rows add up to the month's); a lost GPU-hour has a GPU-hour
    having coalesce(sum(gpu_seconds), 0) > 0 or sum(case when is_infra_failure then 1 else 0 end) > 0

),

attempt_figures as (

    select
        periods.period_id,
        facts.dimension,
        facts.key,
        cast(sum(facts.infra_failures) as bigint) as infra_failures,
        sum(facts.lost_gpu_seconds) / 3600 as lost_gpu_hours,
        cast(sum(facts.gpu_seconds) as bigint) / 3600e0 as gpu_hours
    from {{ period_rows('by_month') }}
    group by periods.period_id, facts.dimension, facts.key

),

runs as (

    select
        periods.period_id,
        facts.*
    from {{ period_rows(ref('fct_job_run_histories')) }}
    where facts.is_ettr_run

)

{{ breakdowns('attempt_figures', 'runs') }}
