-- Each cause's infrastructure failures over each trailing window ending at the month, split into
-- this month and the window's earlier months, with the window's GPU node-days (from
-- fct_node_failure_rate_trailing, the "all" definition) to make them rates.

with by_cause as (

    select * from {{ ref('fct_failures_by_cause_monthly') }}

),

window_totals as (

    select * from {{ ref('fct_node_failure_rate_trailing') }}
    where month = {{ run_parameter('month') }}

),

window_months as (

    {{ trailing_window_months() }}

),

in_window as (

    select
        window_months.month,
        window_months.window_months,
        by_cause.cause_category,
        window_months.is_this_month,
        by_cause.failures
    from window_months
    inner join by_cause on by_cause.month = window_months.window_month

),

summed as (

    select
        month,
        window_months,
        cause_category,
        cast(sum(failures) as bigint) as failures,
        cast(sum(case when is_this_month then failures else 0 end) as bigint) as this_month_failures,
        cast(sum(case when is_this_month then 0 else failures end) as bigint) as earlier_failures
    from in_window
    group by month, window_months, cause_category

)

select
    summed.*,
    window_totals.all_node_days as node_days,
    window_totals.this_month_node_days,
    window_totals.earlier_node_days
from summed
inner join window_totals
    on
        window_totals.month = summed.month
        and window_totals.window_months = summed.window_months
