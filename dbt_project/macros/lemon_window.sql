{% macro lemon_window() -%}
    select
        months.month,
        parameters.cluster,
        windows.lemon_window,
        greatest(
            {{ dbt.dateadd('day', '-1 * windows.window_days', 'months.month_end') }},
            coalesce(covered.covered_start, months.month_start)
        ) as window_start,
        months.month_end as window_end
    from {{ source('run', 'months') }} as months
    cross join {{ source('run', 'parameters') }} as parameters
    cross join (
        select
            'month' as lemon_window,
            lemon_window_days as window_days
        from {{ source('run', 'parameters') }}
        union all
        select
            'trailing' as lemon_window,
            lemon_trailing_days as window_days
        from {{ source('run', 'parameters') }}
        where lemon_trailing_days > 0
    ) as windows
    left join (
        -- a month built starts the run when every month from it to this one is built
        select
            runs.month,
            min(runs.month_start) as covered_start
        from (
            select
                this_month.month,
                this_month.month_start as this_month_start,
                earlier.month_start,
                count(*) as months_built_since
            from {{ source('run', 'months') }} as this_month
            inner join {{ ref('fct_months_built') }} as earlier
                on earlier.month_start <= this_month.month_start
            inner join {{ ref('fct_months_built') }} as later
                on
                    later.month_start >= earlier.month_start
                    and later.month_start <= this_month.month_start
            group by this_month.month, this_month.month_start, earlier.month_start
        ) as runs
        where
            runs.months_built_since
            = {{ dbt.datediff('runs.month_start', 'runs.this_month_start', 'month') }} + 1
        group by runs.month
    ) as covered
        on covered.month = months.month
{%- endmacro %}
