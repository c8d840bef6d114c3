{#- An account or partition as the breakdowns name it: a record without one (Slurm prints an empty
    field) is counted under '(none)', never dropped. The one rule of fct_breakdowns_monthly and
    fct_study_breakdowns, for attempts and job runs alike. -#}
{% macro breakdown_key(column) -%}
    coalesce(nullif({{ column }}, ''), '(none)')
{%- endmacro %}
