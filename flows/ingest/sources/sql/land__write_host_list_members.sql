-- host_list_members.parquet (parameter path): the nodes of each host list, by its id.
copy host_list_members to {{ param("path") }} (format parquet)
