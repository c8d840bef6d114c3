-- Each cause's infrastructure failures over each trailing window ending at the month (macro
-- trailing_window_rows), split into this month and the window's earlier months, with the window's
-- GPU node-days (from fct_node_failure_rate_trailing, the "all" definition) to make them rates.

with in_window as (

    {{ trailing_window_rows('fct_failures_by_cause_monthly', ['cause_category', 'failures']) }}

),

window_totals as (

    select * from {{ ref('fct_node_failure_rate_trailing') }}
    where month in {{ run_months() }}

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
