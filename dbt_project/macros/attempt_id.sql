{% macro attempt_id() -%}
    {{ dbt.hash(dbt.concat([
        "cluster", "'|'", "job_id_raw",
        "case when " ~ dbt.position("'_'", "job_id") ~ " > 0 then substr(job_id, " ~ dbt.position("'_'", "job_id") ~ ") else '' end",
        "'|'", "cast(submit_at as " ~ dbt.type_string() ~ ")"
    ])) }}
{%- endmacro %}
