{#- An attempt's key: its cluster, job number and submit time (each requeue is submitted anew).
    One definition for every model that keys attempts, so their keys always join. -#}
{% macro attempt_id(relation=none) -%}
    {%- set prefix = relation ~ '.' if relation else '' -%}
    {{ dbt.hash(dbt.concat([prefix ~ "cluster", "'|'", prefix ~ "job_id_raw", "'|'", "cast(" ~ prefix ~ "submit_at as varchar)"])) }}
{%- endmacro %}
