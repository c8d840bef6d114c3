-- The lists that are not simple: ClusterShell expands them.
select
    list_id,
    node_list
from host_lists
where not simple
