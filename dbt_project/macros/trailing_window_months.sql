{#- The months built so far that fall in each trailing window ending at the month being built
    (run.trailing_windows): one row per (month, window_months, window_month), with is_this_month
    for the window's last month. The one rule of which months a trailing window holds. -#}
{% macro trailing_window_months() -%}
    select
        this_month.month,
        windows.window_months,
        monthly.month as window_month,
        monthly.month = this_month.month as is_this_month
    from {{ source('run', 'parameters') }} as this_month
    cross join {{ source('run', 'trailing_windows') }} as windows
    inner join {{ ref('fct_node_failure_rate_monthly') }} as monthly
        on
            {{ dbt.datediff('monthly.month_start', 'this_month.month_start', 'month') }} >= 0
            and {{ dbt.datediff('monthly.month_start', 'this_month.month_start', 'month') }} < windows.window_months
{%- endmacro %}
