-- A node's faults (its incidents of critical events) in the months asked.
select
    month,
    fault_at,
    last_event_at,
    category,
    source,
    critical_events
from fct_node_faults
where node = {{ param("node") }} and month in (select unnest({{ param("months") }}::varchar[]))
order by fault_at
