{% macro lemon_window() -%}
    select
        parameters.month,
        parameters.cluster,
        windows.lemon_window,
        greatest(
            {{ dbt.dateadd('day', '-1 * windows.window_days', 'parameters.month_end') }},
            coalesce(covered.covered_start, parameters.month_start)
        ) as window_start,
        parameters.month_end as window_end
    from {{ source('run', 'parameters') }} as parameters
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
    cross join (
        -- a month built starts the run when every month from it to this one is built
        select min(runs.month_start) as covered_start
        from (
            select
                earlier.month_start,
                count(*) as months_built_since
            from {{ ref('fct_months_built') }} as earlier
            inner join {{ ref('fct_months_built') }} as later
                on
                    later.month_start >= earlier.month_start
                    and later.month_start <= {{ run_parameter('month_start') }}
            where earlier.month_start <= {{ run_parameter('month_start') }}
            group by earlier.month_start
        ) as runs
        where
            runs.months_built_since
            = {{ dbt.datediff('runs.month_start', run_parameter('month_start'), 'month') }} + 1
    ) as covered
{%- endmacro %}
