-- A node's outages that began in the months asked, with their repair times.
select
    month,
    out_at,
    back_at,
    node_state,
    reason,
    category,
    repair_seconds
from fct_node_outages
where
    node = {{ param("node") }}
    and month in (select unnest({{ param("months") }}::varchar[]))
    and began_in_month
order by out_at
