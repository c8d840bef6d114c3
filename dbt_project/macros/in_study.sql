{#- A monthly mart's rows of the study's months (run.parameters study_from..study_to, YYYY-MM). -#}
{% macro in_study(month_column='month') -%}
    {{ month_column }} between {{ run_parameter('study_from') }} and {{ run_parameter('study_to') }}
{%- endmacro %}
