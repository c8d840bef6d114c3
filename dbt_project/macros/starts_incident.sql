{#- Whether a node's signal at `at` starts a new incident, its previous one (of the same kind) being at
    `previous_at` (null: none): one fault goes on signalling (an Xid, the health checks' failures,
    the drain, every job on the node ending) for minutes, so a signal within an hour of the one
    before it belongs to the running incident, however long the chain. The one rule of what an
    incident is, for the lemon nodes' failure incidents and the fleet's node faults. -#}
{% macro starts_incident(at, previous_at) -%}
    ({{ previous_at }} is null or {{ at }} > {{ dbt.dateadd('hour', 1, previous_at) }})
{%- endmacro %}
