-- Each dimension of fct_breakdowns_monthly adds up to the month's figures: its infrastructure
-- failures and GPU-hours to fct_month_totals', its lost GPU-hours to fct_lost_goodput_monthly's
-- (second-order preemptions included) and its ETTR runs to fct_ettr_by_size_ended_monthly's.
with breakdowns as (

    select
        month,
        dimension,
        sum(infra_failures) as infra_failures,
        sum(lost_gpu_hours) as lost_gpu_hours,
        sum(gpu_hours) as gpu_hours,
        sum(ettr_runs) as ettr_runs
    from {{ ref('fct_breakdowns_monthly') }}
    where month in {{ run_months() }}
    group by month, dimension

),

totals as (

    select
        month,
        infra_failures,
        gpu_hours
    from {{ ref('fct_month_totals') }}
    where month in {{ run_months() }}

),

lost as (

    select
        month,
        lost_gpu_hours
    from {{ ref('fct_lost_goodput_monthly') }}
    where month in {{ run_months() }}

),

ettr as (

    select
        months.month,
        coalesce(sum(by_size.runs), 0) as runs
    from {{ source('run', 'months') }} as months
    left join {{ ref('fct_ettr_by_size_ended_monthly') }} as by_size
        on by_size.month = months.month and by_size.run_set = 'all'
    group by months.month

)

select breakdowns.*
from breakdowns
inner join totals on totals.month = breakdowns.month
inner join lost on lost.month = breakdowns.month
inner join ettr on ettr.month = breakdowns.month
where
    breakdowns.infra_failures <> totals.infra_failures
    or abs(breakdowns.gpu_hours - totals.gpu_hours) > 1e-9 * greatest(totals.gpu_hours, 1)
    or abs(breakdowns.lost_gpu_hours - lost.lost_gpu_hours) > 1e-9 * greatest(lost.lost_gpu_hours, 1)
    or breakdowns.ettr_runs <> ettr.runs
