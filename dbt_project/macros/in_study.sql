{% macro in_study(month_column='month') -%}
    {{ month_column }} between {{ run_parameter('study_from') }} and {{ run_parameter('study_to') }}
{%- endmacro %}
