-- Each period's lost goodput by size bucket adds up to its total (summed month by month in
-- fct_period_lost_goodput): the same failures and preemptions, the same GPU-hours up to rounding.

with by_size as (

    select
        period_id,
        cast(sum(infra_failures) as bigint) as infra_failures,
        cast(sum(second_order_preemptions) as bigint) as second_order_preemptions,
        sum(first_order_gpu_hours) as first_order_gpu_hours,
        sum(second_order_gpu_hours) as second_order_gpu_hours,
        sum(lost_gpu_hours) as lost_gpu_hours
    from {{ ref('fct_period_lost_goodput_by_size') }}
    group by period_id

)

select
    totals.period_id,
    totals.infra_failures,
    by_size.infra_failures as infra_failures_by_size,
    totals.lost_gpu_hours,
    by_size.lost_gpu_hours as lost_gpu_hours_by_size
from {{ ref('fct_period_lost_goodput') }} as totals
inner join by_size on by_size.period_id = totals.period_id
where
    totals.infra_failures <> by_size.infra_failures
    or totals.second_order_preemptions <> by_size.second_order_preemptions
    or abs(totals.first_order_gpu_hours - by_size.first_order_gpu_hours) > 1e-9 * (1 + totals.first_order_gpu_hours)
    or abs(totals.second_order_gpu_hours - by_size.second_order_gpu_hours) > 1e-9 * (1 + totals.second_order_gpu_hours)
    or abs(totals.lost_gpu_hours - by_size.lost_gpu_hours) > 1e-9 * (1 + totals.lost_gpu_hours)
