{#- The lemon-node window of the month being built: lemon_window_days ending at the month's end
    (window_end excluded). One row: month, cluster, window_start, window_end. -#}
{% macro lemon_window() -%}
    select
        month,
        cluster,
        {{ dbt.dateadd('day', '-1 * lemon_window_days', 'month_end') }} as window_start,
        month_end as window_end
    from {{ source('run', 'parameters') }}
{%- endmacro %}
