-- Each dimension of fct_breakdowns_monthly adds up to the month's figures: its infrastructure
-- failures and GPU-hours to fct_month_totals', its lost GPU-hours to fct_lost_goodput_monthly's
-- (second-order preemptions included) and its ETTR runs to fct_ettr_by_size_ended_monthly's.
with breakdowns as (

    select
        dimension,
        sum(infra_failures) as infra_failures,
        sum(lost_gpu_hours) as lost_gpu_hours,
        sum(gpu_hours) as gpu_hours,
        sum(ettr_runs) as ettr_runs
    from {{ ref('fct_breakdowns_monthly') }}
    where month = {{ run_parameter('month') }}
    group by dimension

),

totals as (

    select
        infra_failures,
        gpu_hours
    from {{ ref('fct_month_totals') }}
    where month = {{ run_parameter('month') }}

),

lost as (

    select lost_gpu_hours
    from {{ ref('fct_lost_goodput_monthly') }}
    where month = {{ run_parameter('month') }}

),

ettr as (

    select coalesce(sum(runs), 0) as runs
    from {{ ref('fct_ettr_by_size_ended_monthly') }}
    where month = {{ run_parameter('month') }} and run_set = 'all'

)

select breakdowns.*
from breakdowns
cross join totals
cross join lost
cross join ettr
where
    breakdowns.infra_failures <> totals.infra_failures
    or abs(breakdowns.gpu_hours - totals.gpu_hours) > 1e-9 * greatest(totals.gpu_hours, 1)
    or abs(breakdowns.lost_gpu_hours - lost.lost_gpu_hours) > 1e-9 * greatest(lost.lost_gpu_hours, 1)
    or breakdowns.ettr_runs <> ettr.runs
