-- Each period's (dim_periods) GPU-hours lost to infrastructure failures (docs/methodology.md "Lost
-- goodput", macro lost_goodput), each month's GPU-seconds summed over the period's months built (the
-- same sum in any order) and then in hours:
-- min(runtime, lost_work_cap_minutes) x GPUs of each infrastructure failure (first order) and of
-- each attempt preempted to make room for a restart after a failure (second order,
-- fct_second_order_preemptions), and their share of the period's GPU-hours (fct_period_totals).

with by_month as (

    {{ lost_goodput('(' ~ lost_work() ~ ')', ['month']) }}

),

summed as (

    select
        periods.period_id,
        coalesce(sum(facts.first_order_gpu_seconds), 0) as first_order_gpu_seconds,
        coalesce(sum(facts.second_order_gpu_seconds), 0) as second_order_gpu_seconds,
        cast(coalesce(sum(facts.second_order_preemptions), 0) as bigint) as second_order_preemptions,
        cast(coalesce(sum(facts.infra_failures), 0) as bigint) as infra_failures
    from {{ ref('dim_period_months') }} as periods
    left join by_month as facts on facts.month = periods.month
    group by periods.period_id

),

lost as (

    select
        period_id,
        second_order_preemptions,
        infra_failures,
        {{ lost_gpu_hours('first_order_gpu_seconds', 'second_order_gpu_seconds') }}
    from summed

)

select
    lost.*,
    {{ share('lost.lost_gpu_hours', 'totals.gpu_hours') }} as share_of_gpu_hours
from lost
inner join {{ ref('fct_period_totals') }} as totals on totals.period_id = lost.period_id
