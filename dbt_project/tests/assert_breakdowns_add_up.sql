-- Each dimension of fct_period_breakdowns adds up to its period's figures: its infrastructure
-- failures and GPU-hours to fct_period_totals', its lost GPU-hours to fct_period_lost_goodput's
-- (second-order preemptions included) and its ETTR runs to fct_period_ettr_by_size's.
with breakdowns as (

    select
        period_id,
        dimension,
        sum(infra_failures) as infra_failures,
        sum(lost_gpu_hours) as lost_gpu_hours,
        sum(gpu_hours) as gpu_hours,
        sum(ettr_runs) as ettr_runs
    from {{ ref('fct_period_breakdowns') }}
    group by period_id, dimension

),

ettr as (

    select
        period_id,
        sum(runs) as runs
    from {{ ref('fct_period_ettr_by_size') }}
    where run_set = 'all'
    group by period_id

)

select breakdowns.*
from breakdowns
inner join {{ ref('fct_period_totals') }} as totals on totals.period_id = breakdowns.period_id
inner join {{ ref('fct_period_lost_goodput') }} as lost on lost.period_id = breakdowns.period_id
left join ettr on ettr.period_id = breakdowns.period_id
where
    breakdowns.infra_failures <> totals.infra_failures
    or abs(breakdowns.gpu_hours - totals.gpu_hours) > 1e-9 * greatest(totals.gpu_hours, 1)
    or abs(breakdowns.lost_gpu_hours - lost.lost_gpu_hours) > 1e-9 * greatest(lost.lost_gpu_hours, 1)
    or breakdowns.ettr_runs <> coalesce(ettr.runs, 0)
