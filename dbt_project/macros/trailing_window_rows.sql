{% macro trailing_window_rows(monthly, columns) -%}
    select
        this_month.month,
        windows.window_months,
        monthly.month = this_month.month as is_this_month,
        {%- for column in columns %}
        monthly.{{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ source('run', 'months') }} as this_month
    cross join {{ source('run', 'trailing_windows') }} as windows
    inner join {{ ref('fct_node_failure_rate_monthly') }} as built
        on
            {{ dbt.datediff('built.month_start', 'this_month.month_start', 'month') }} >= 0
            and {{ dbt.datediff('built.month_start', 'this_month.month_start', 'month') }} < windows.window_months
    inner join {{ ref(monthly) }} as monthly on monthly.month = built.month
{%- endmacro %}
