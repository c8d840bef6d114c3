{#- An attempt's key: its cluster, job number and submit time (each requeue is submitted anew).
    One definition for every model that keys attempts, so their keys always join. -#}
{% macro attempt_id() -%}
    {{ dbt.hash(dbt.concat(["cluster", "'|'", "job_id_raw", "'|'", "cast(submit_at as varchar)"])) }}
{%- endmacro %}
