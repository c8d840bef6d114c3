{% macro mttf_hours(runtime_seconds, infra_failures) -%}
    case when {{ infra_failures }} > 0 then {{ runtime_seconds }} / 3600e0 / {{ infra_failures }} end
{%- endmacro %}
