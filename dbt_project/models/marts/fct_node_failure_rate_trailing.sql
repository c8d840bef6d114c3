-- r_f over each trailing window ending at the month (run.trailing_windows: 3, 6, 12 months by
-- default), from the months built so far: the window's failures and node-days under both
-- definitions, and the same split into this month and the window's earlier months (the report
-- tests this month's rate against the earlier months').

with monthly as (

    select * from {{ ref('fct_node_failure_rate_monthly') }}

),

window_months as (

    {{ trailing_window_months() }}

),

in_window as (

    select
        window_months.month,
        window_months.window_months,
        window_months.is_this_month,
        monthly.paper_failures,
        monthly.paper_node_seconds,
        monthly.all_failures,
        monthly.all_node_seconds
    from window_months
    inner join monthly on monthly.month = window_months.window_month

)

select
    month,
    window_months,
    count(*) as months_available,
    cast(sum(paper_failures) as bigint) as paper_failures,
    cast(sum(paper_node_seconds) as bigint) / 86400e0 as paper_node_days,
    cast(sum(all_failures) as bigint) as all_failures,
    cast(sum(all_node_seconds) as bigint) / 86400e0 as all_node_days,
    cast(sum(case when is_this_month then all_failures else 0 end) as bigint) as this_month_failures,
    cast(sum(case when is_this_month then all_node_seconds else 0 end) as bigint) / 86400e0 as this_month_node_days,
    cast(sum(case when is_this_month then 0 else all_failures end) as bigint) as earlier_failures,
    cast(sum(case when is_this_month then 0 else all_node_seconds end) as bigint) / 86400e0 as earlier_node_days
from in_window
group by month, window_months
