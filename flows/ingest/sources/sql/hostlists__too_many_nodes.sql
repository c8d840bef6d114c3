-- The simple lists longer than any cluster: refused before they are expanded.
select
    node_list,
    size
from host_lists
where simple and size > {{ param("max_nodes") }}
