{% macro starts_incident(at, previous_at) -%}
    ({{ previous_at }} is null or {{ at }} > {{ dbt.dateadd('hour', 1, previous_at) }})
{%- endmacro %}
