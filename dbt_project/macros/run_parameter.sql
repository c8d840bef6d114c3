{% macro run_parameter(name) -%}
    (select {{ name }} from {{ source('run', 'parameters') }})
{%- endmacro %}
