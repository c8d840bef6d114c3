-- One row per node seen in any month built so far (rebuilt from fct_node_days, which keeps every
-- month): when it was first and last seen, and whether it is a GPU node. Here, and only here, the
-- rule of which nodes the fleet's figures count (docs/methodology.md "GPU nodes"): a node is a GPU
-- node when it ran a GPU attempt (int_attempts_month_scoped.is_gpu_attempt) or logged an Xid or a
-- DCGM health report on any day of the months built so far. The fleet's node fault rate
-- (fct_node_failure_rate_monthly) and the lemon fleet (fct_node_lemon_signals,
-- fct_lemon_fleet_monthly) count GPU nodes only; a CPU-only node is only counted
-- (fct_month_totals.cpu_only_nodes).

{{ config(materialized='table', partition_by=none) }}

select
    cluster,
    node,
    min(day) as first_seen_day,
    max(day) as last_seen_day,
    min(case when gpu_attempts > 0 or gpu_events > 0 then day end) as first_gpu_day,
    coalesce(max(case when gpu_attempts > 0 or gpu_events > 0 then 1 else 0 end) = 1, false) as is_gpu_node
from {{ ref('fct_node_days') }}
group by cluster, node
