{% macro lemon_windows() -%}
    select
        windows.period_id,
        parameters.cluster,
        windows.lemon_window,
        greatest(windows.window_start, covered.covered_start) as window_start,
        windows.window_end
    from (
        -- a month's own window (lemon_window_days) and its trailing one (lemon_trailing_days, none
        -- when 0), each ending at the month's end
        select
            periods.period_id,
            lengths.lemon_window,
            {{ dbt.dateadd('day', '-1 * lengths.window_days', 'last_built.month_end') }} as window_start,
            last_built.month_end as window_end
        from {{ ref('dim_periods') }} as periods
        inner join {{ ref('fct_months_built') }} as last_built on last_built.month = periods.last_month
        cross join (
            select
                'own' as lemon_window,
                lemon_window_days as window_days
            from {{ source('run', 'parameters') }}
            union all
            select
                'trailing' as lemon_window,
                lemon_trailing_days as window_days
            from {{ source('run', 'parameters') }}
            where lemon_trailing_days > 0
        ) as lengths
        where periods.kind = 'month'
        union all
        -- a study's own window: its range, from its first month built to the end of its last
        select
            periods.period_id,
            'own' as lemon_window,
            min(built.month_start) as window_start,
            max(built.month_end) as window_end
        from {{ ref('dim_periods') }} as periods
        inner join {{ ref('fct_months_built') }} as built
            on built.month between periods.first_month and periods.last_month
        where periods.kind = 'study'
        group by periods.period_id
    ) as windows
    cross join {{ source('run', 'parameters') }} as parameters
    inner join (
        -- a month built starts the run ending at a month when every month from it to that one is built
        select
            runs.month_end,
            min(runs.month_start) as covered_start
        from (
            select
                this_month.month_end,
                this_month.month_start as this_month_start,
                earlier.month_start,
                count(*) as months_built_since
            from {{ ref('fct_months_built') }} as this_month
            inner join {{ ref('fct_months_built') }} as earlier
                on earlier.month_start <= this_month.month_start
            inner join {{ ref('fct_months_built') }} as later
                on
                    later.month_start >= earlier.month_start
                    and later.month_start <= this_month.month_start
            group by this_month.month_end, this_month.month_start, earlier.month_start
        ) as runs
        where
            runs.months_built_since
            = {{ dbt.datediff('runs.month_start', 'runs.this_month_start', 'month') }} + 1
        group by runs.month_end
    ) as covered
        on covered.month_end = windows.window_end
{%- endmacro %}
