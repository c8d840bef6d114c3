{#- An attempt's key: its cluster, job number, array index (`_3` of JobID `12_3`: some dumps give an
    array's tasks one JobIDRaw) and submit time (each requeue is submitted anew). The same as the
    landing's duplicate key (flows/sources/job_records.py). One definition for every model that keys
    attempts, so their keys always join. -#}
{% macro attempt_id() -%}
    {{ dbt.hash(dbt.concat([
        "cluster", "'|'", "job_id_raw",
        "case when " ~ dbt.position("'_'", "job_id") ~ " > 0 then substr(job_id, " ~ dbt.position("'_'", "job_id") ~ ") else '' end",
        "'|'", "cast(submit_at as " ~ dbt.type_string() ~ ")"
    ])) }}
{%- endmacro %}
