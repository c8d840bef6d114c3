-- The paper's estimate of the GPU-hours lost to infrastructure failures in the month
-- (docs/methodology.md "Lost goodput"): min(runtime, lost_work_cap_minutes) x GPUs of each
-- infrastructure failure (first order) and of each attempt preempted to make room for a restart
-- after a failure (second order, fct_second_order_preemptions), and their share of the month's
-- GPU-hours.

with failures as (

    select
        {{ lost_work_gpu_hours() }} as lost_gpu_hours,
        count(*) as infra_failures
    from {{ ref('fct_attempts') }}
    where month = {{ run_parameter('month') }} and is_infra_failure

),

preemptions as (

    select
        {{ lost_work_gpu_hours() }} as lost_gpu_hours,
        count(*) as second_order_preemptions
    from {{ ref('fct_second_order_preemptions') }}
    where month = {{ run_parameter('month') }}

)

select
    totals.month,
    failures.lost_gpu_hours + preemptions.lost_gpu_hours as lost_gpu_hours,
    failures.lost_gpu_hours as first_order_gpu_hours,
    preemptions.lost_gpu_hours as second_order_gpu_hours,
    failures.infra_failures,
    preemptions.second_order_preemptions,
    case
        when totals.gpu_hours > 0
            then (failures.lost_gpu_hours + preemptions.lost_gpu_hours) / totals.gpu_hours
    end as share_of_gpu_hours
from {{ ref('fct_month_totals') }} as totals
cross join failures
cross join preemptions
where totals.month = {{ run_parameter('month') }}
