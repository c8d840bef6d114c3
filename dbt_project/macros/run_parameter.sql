{#- One value of the build in progress (source run.parameters, one row), as a scalar subquery. -#}
{% macro run_parameter(name) -%}
    (select {{ name }} from {{ source('run', 'parameters') }})
{%- endmacro %}
