-- host_lists.parquet (parameter path): each distinct host list once, by its id.
copy (
    select
        list_id,
        node_list
    from host_lists
) to {{ param("path") }} (format parquet)
