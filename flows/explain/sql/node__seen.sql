-- A node as dim_nodes knows it.
select
    is_gpu_node,
    first_seen_day,
    last_seen_day
from dim_nodes
where node = {{ param("node") }}
