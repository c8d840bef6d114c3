-- The paper's estimate of the GPU-hours lost to infrastructure failures in the month
-- (docs/methodology.md "Lost goodput", macro lost_goodput): min(runtime, lost_work_cap_minutes) x
-- GPUs of each infrastructure failure (first order) and of each attempt preempted to make room for
-- a restart after a failure (second order, fct_second_order_preemptions), and their share of the
-- month's GPU-hours.

{% call(month) for_each_run_month() %}
with lost as (

    {{ lost_goodput('month = ' ~ month) }}

)

select
    totals.month,
    lost.lost_gpu_hours,
    lost.first_order_gpu_hours,
    lost.second_order_gpu_hours,
    lost.infra_failures,
    lost.second_order_preemptions,
    {{ share('lost.lost_gpu_hours', 'totals.gpu_hours') }} as share_of_gpu_hours
from {{ ref('fct_month_totals') }} as totals
cross join lost
where totals.month = {{ month }}
{% endcall %}
