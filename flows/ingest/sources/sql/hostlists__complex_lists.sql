-- The lists that are not simple: hostlists.py's scanner checks, sizes and expands them.
select
    list_id,
    node_list
from host_lists
where not simple
