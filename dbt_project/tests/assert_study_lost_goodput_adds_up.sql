{{ config(tags=['study']) }}
-- A study's lost goodput by size bucket adds up to its totals (summed month by month from
-- fct_lost_goodput_monthly): the same failures and preemptions, the same GPU-hours up to rounding.

with by_size as (

    select
        cast(sum(infra_failures) as bigint) as infra_failures,
        cast(sum(second_order_preemptions) as bigint) as second_order_preemptions,
        sum(first_order_gpu_hours) as first_order_gpu_hours,
        sum(second_order_gpu_hours) as second_order_gpu_hours,
        sum(lost_gpu_hours) as lost_gpu_hours
    from {{ ref('fct_study_lost_goodput_by_size') }}

)

select
    totals.infra_failures,
    by_size.infra_failures as infra_failures_by_size,
    totals.second_order_preemptions,
    by_size.second_order_preemptions as second_order_preemptions_by_size,
    totals.lost_gpu_hours,
    by_size.lost_gpu_hours as lost_gpu_hours_by_size
from {{ ref('fct_study_totals') }} as totals
cross join by_size
where
    totals.infra_failures <> by_size.infra_failures
    or totals.second_order_preemptions <> by_size.second_order_preemptions
    or abs(totals.first_order_gpu_hours - by_size.first_order_gpu_hours) > 1e-9 * (1 + totals.first_order_gpu_hours)
    or abs(totals.second_order_gpu_hours - by_size.second_order_gpu_hours) > 1e-9 * (1 + totals.second_order_gpu_hours)
    or abs(totals.lost_gpu_hours - by_size.lost_gpu_hours) > 1e-9 * (1 + totals.lost_gpu_hours)
