-- The health and node events on an attempt's nodes in its attribution window (and its chosen
-- cause's event, wherever it is), each with what its log said: a node event's reason from the month's
-- landed {{ node_events }}, a health check's message from its landed {{ health_checks }}.
select
    events.node,
    events.event_at,
    events.source,
    events.check_name,
    events.code,
    events.category,
    events.severity,
    any_value(node_events.reason) as reason,
    any_value(checks.message) as message
from fct_health_events as events
left join {{ node_events }} as node_events
    on
        events.source = 'slurm_event'
        and events.node = node_events.node
        and events.event_at = node_events.started_at
left join {{ health_checks }} as checks
    on
        events.node = checks.node
        and events.event_at = checks.ts
        and events.check_name = checks.check_name
        and events.source = checks.source
where
    events.month = {{ param("month") }}
    and events.node in (select unnest({{ param("nodes") }}::varchar[]))
    and (
        events.event_at between {{ param("window_start") }} and {{ param("window_end") }}
        or (events.node = {{ param("cause_node") }} and events.event_at = {{ param("cause_at") }})
    )
group by all
order by events.event_at, events.node, events.source, events.check_name, events.code
