-- One row per node seen in any month built so far (rebuilt from fct_node_days, which keeps every
-- month): when it was first and last seen.

{{ config(materialized='table', partition_by=none) }}

select
    cluster,
    node,
    min(day) as first_seen_day,
    max(day) as last_seen_day
from {{ ref('fct_node_days') }}
group by cluster, node
