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

this_month as (

    select
        month,
        month_start
    from {{ source('run', 'parameters') }}

),

in_window as (

    select
        window_totals.month,
        window_totals.window_months,
        by_cause.cause_category,
        by_cause.month = window_totals.month as is_this_month,
        by_cause.failures
    from window_totals
    inner join this_month on this_month.month = window_totals.month
    inner join {{ ref('fct_node_failure_rate_monthly') }} as monthly
        on
            {{ dbt.datediff('monthly.month_start', 'this_month.month_start', 'month') }} >= 0
            and {{ dbt.datediff('monthly.month_start', 'this_month.month_start', 'month') }} < window_totals.window_months
    inner join by_cause on by_cause.month = monthly.month

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
