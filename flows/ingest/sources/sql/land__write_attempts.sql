-- attempts.parquet (parameter path): the landed columns of the attempts (template variable columns,
-- registry.TABLES["attempts"]), with the cluster and the source file (parameters).
copy (
    select
        {%- for column in columns %}
        {% if column in ("cluster", "source_file") %}{{ param(column) }} as {{ column }}{% else %}{{ column }}{% endif %}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from attempts
) to {{ param("path") }} (format parquet)
