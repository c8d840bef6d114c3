-- attempts.parquet (parameter path): the landed columns of the attempts in the registry's order
-- (registry.TABLES["attempts"]): the cluster (a parameter), the staged columns (template variable
-- columns), the source file (a parameter) and the line.
copy (
    select
        {{ param("cluster") }} as cluster,
        {{ columns | join(", ") }},
        {{ param("source_file") }} as source_file,
        source_line
    from attempts
) to {{ param("path") }} (format parquet)
