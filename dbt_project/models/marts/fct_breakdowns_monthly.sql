-- The month's infrastructure failures, lost GPU-hours, GPU-hours and ETTR by account and by
-- partition (docs/metrics.md `breakdowns`): one row per account and per partition with
-- attempts in the month, ranked by lost GPU-hours (macro breakdowns). Lost GPU-hours are the
-- paper's estimate as in fct_lost_goodput_monthly: each infrastructure failure's (first order)
-- plus each attempt preempted for a restart after a failure (second order,
-- fct_second_order_preemptions), the latter charged to the preempted attempt's own account and
-- partition, whose work was lost. So each dimension's rows add up to the month's figures. ETTR is
-- over the long job runs that ended in the month (fct_job_run_histories.is_ettr_run), under the
-- run's account and the partition of its last attempt. GPU attempts only (is_gpu_attempt): a key
-- with no GPU-hours and no infrastructure failure of a GPU attempt has no row.

{% call(month) for_each_run_month() %}
with preempted as (

    select attempt_id
    from {{ ref('fct_second_order_preemptions') }}
    where month = {{ month }}

),

attempts as (

    select
        attempts.account,
        attempts.partition,
        attempts.is_infra_failure,
        -- the attempts whose work counts as lost: the failures and the second-order preemptions
        attempts.is_infra_failure or preempted.attempt_id is not null as is_lost_work,
        attempts.runtime_seconds,
        attempts.gpus,
        attempts.gpu_seconds
    from {{ ref('fct_attempts') }} as attempts
    left join preempted on preempted.attempt_id = attempts.attempt_id
    where attempts.month = {{ month }} and attempts.is_gpu_attempt

),

keyed_attempts as (

    {{ by_breakdown_key('attempts', ['is_infra_failure', 'is_lost_work', 'runtime_seconds', 'gpus', 'gpu_seconds']) }}

),

attempt_figures as (

    select
        dimension,
        key,
        cast(sum(case when is_infra_failure then 1 else 0 end) as bigint) as infra_failures,
        -- the other attempts count with no GPUs (not with a null runtime: least() skips nulls)
        {{ lost_work_gpu_hours(gpus='case when is_lost_work then gpus else 0 end') }} as lost_gpu_hours,
        cast(coalesce(sum(gpu_seconds), 0) as bigint) / 3600e0 as gpu_hours
    from keyed_attempts
    group by dimension, key
    -- the failures stay (each dimension's rows add up to the month's); a lost GPU-hour has a GPU-hour
    having coalesce(sum(gpu_seconds), 0) > 0 or sum(case when is_infra_failure then 1 else 0 end) > 0

),

runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where month = {{ month }} and is_ettr_run

),

breakdowns as (

    {{ breakdowns('attempt_figures', 'runs') }}

)

select
    {{ month }} as month,
    breakdowns.*
from breakdowns
{% endcall %}
