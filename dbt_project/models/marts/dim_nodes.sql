-- One row per node seen in any month built so far (rebuilt from fct_node_days, which keeps every
-- month): when it was first and last seen, and whether it is a GPU node. Here, and only here, the
-- rule of which nodes the fleet's figures count (docs/methodology.md "GPU nodes"): a node is a GPU
-- node when it ran a GPU attempt (int_attempts_month_scoped.is_gpu_attempt) or logged an Xid or a
-- DCGM health report on any day of the months built so far. The fleet's node fault rate
-- (fct_period_node_failure_rate) and the lemon fleet (fct_node_lemon_signals,
-- fct_period_lemon_fleet) count GPU nodes only; a CPU-only node is only counted
-- (fct_period_totals.cpu_only_nodes).

{{ config(materialized='table', partition_by=none) }}

with node_days as (

    select
        cluster,
        node,
        day,
        -- a month built by a version before gpu_attempts and gpu_events: its GPU-busy time
        coalesce(
            gpu_attempts > 0 or gpu_events > 0,
            gpu_busy_seconds > 0,
            false
        ) as is_gpu_day
    from {{ ref('fct_node_days') }}

)

select
    cluster,
    node,
    min(day) as first_seen_day,
    max(day) as last_seen_day,
    min(case when is_gpu_day then day end) as first_gpu_day,
    coalesce(max(case when is_gpu_day then 1 else 0 end) = 1, false) as is_gpu_node
from node_days
group by cluster, node
