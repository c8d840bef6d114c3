-- r_f over each trailing window ending at the month (run.trailing_windows: 3, 6, 12 months by
-- default), from the months built so far (macro trailing_window_rows): the window's failures and
-- node-days under both definitions (macro node_failure_rate_sums), and the same split into this
-- month and the window's earlier months (the report tests this month's rate against the earlier
-- months').

with in_window as (

    {{ trailing_window_rows(
        'fct_node_failure_rate_monthly',
        ['paper_failures', 'paper_node_seconds', 'all_failures', 'all_node_seconds']
    ) }}

)

select
    month,
    window_months,
    count(*) as months_available,
    {{ node_failure_rate_sums() }},
    cast(sum(case when is_this_month then all_failures else 0 end) as bigint) as this_month_failures,
    cast(sum(case when is_this_month then all_node_seconds else 0 end) as bigint) / 86400e0 as this_month_node_days,
    cast(sum(case when is_this_month then 0 else all_failures end) as bigint) as earlier_failures,
    cast(sum(case when is_this_month then 0 else all_node_seconds end) as bigint) / 86400e0 as earlier_node_days
from in_window
group by month, window_months
