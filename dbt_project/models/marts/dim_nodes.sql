-- One row per node seen in any month built so far (rebuilt from fct_node_days, which keeps every
-- month): when it was first and last seen, and its totals.

{{ config(materialized='table') }}

select
    cluster,
    node,
    min(day) as first_seen_day,
    max(day) as last_seen_day,
    count(distinct month) as months_seen,
    cast(sum(busy_seconds) as bigint) / 3600.0 as busy_hours,
    cast(sum(critical_events) as bigint) as critical_events,
    cast(sum(warning_events) as bigint) as warning_events,
    cast(sum(infra_failures) as bigint) as infra_failures
from {{ ref('fct_node_days') }}
group by cluster, node
