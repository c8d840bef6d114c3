{% macro failure_rates(failures, node_days, gpu_hours) -%}
    case when {{ node_days }} > 0 then {{ failures }} * 1000 / {{ node_days }} end as per_1000_node_days,
    case when {{ gpu_hours }} > 0 then {{ failures }} * 1e6 / {{ gpu_hours }} end as per_million_gpu_hours
{%- endmacro %}
