{#- The lemon-node windows of the month being built (docs/methodology.md "Lemon nodes"), one row
    each: `month`, lemon_window_days ending at the month's end, and `trailing`, lemon_trailing_days
    ending there (none when 0). A window starts no earlier than the run of consecutive months built
    that ends at this month (fct_node_failure_rate_monthly has one row per month built): over the
    months built, if fewer. window_end is excluded. Columns: month, cluster, lemon_window,
    window_start, window_end. The one rule of which days a lemon window holds. -#}
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
            from {{ ref('fct_node_failure_rate_monthly') }} as earlier
            inner join {{ ref('fct_node_failure_rate_monthly') }} as later
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
