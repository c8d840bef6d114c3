-- The health and node events on the nodes of a month's attempts asked, in each one's attribution
-- window (and its chosen cause's event, wherever it is), each with what its log said: a node event's
-- reason from the month's landed {{ node_events }}, a health check's message from its landed
-- {{ health_checks }}. The attempts come as parallel lists, one element per (attempt, node).
with asked as (

    select
        unnest({{ param("attempts") }}::varchar[]) as attempt_id,
        unnest({{ param("nodes") }}::varchar[]) as node,
        unnest({{ param("window_starts") }}::timestamp[]) as window_start,
        unnest({{ param("window_ends") }}::timestamp[]) as window_end,
        unnest({{ param("cause_ats") }}::timestamp[]) as cause_at

)

select
    asked.attempt_id,
    events.node,
    events.event_at,
    events.source,
    events.check_name,
    events.code,
    events.category,
    events.severity,
    any_value(node_events.reason) as reason,
    any_value(checks.message) as message
from asked
inner join fct_health_events as events
    on
        asked.node = events.node
        and events.month = {{ param("month") }}
        and (events.event_at between asked.window_start and asked.window_end or events.event_at = asked.cause_at)
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
group by all
order by asked.attempt_id, events.event_at, events.node, events.source, events.check_name, events.code
