-- The month in totals: attempts, split into GPU attempts and CPU-only ones (is_gpu_attempt, the
-- rule of int_attempts_month_scoped: the GPU figures count only the former), GPU-hours, the GPU
-- attempts' node-days and infrastructure failures, attempts still running at the dump, attempts
-- whose Slurm state the taxonomy does not know, the health events of the month with the share
-- no taxonomy rule classified, and the CPU-only nodes seen in the month (not dim_nodes.is_gpu_node:
-- in neither the fleet's fault rate nor the lemon fleet). One row per month built.

{% call(month) for_each_run_month() %}
with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month = {{ month }}

),

health_events as (

    select * from {{ ref('fct_health_events') }}
    where month = {{ month }}

),

attempt_totals as (

    select
        count(*) as attempts,
        cast(coalesce(sum(case when is_gpu_attempt then 1 else 0 end), 0) as bigint) as gpu_attempts,
        cast(coalesce(sum(case when is_gpu_attempt then 0 else 1 end), 0) as bigint) as cpu_only_attempts,
        cast(coalesce(sum(gpu_seconds), 0) as bigint) / 3600e0 as gpu_hours,
        -- gpu_node_seconds is 0 for a CPU-only attempt: this is fct_node_failure_rate_monthly's all_node_days
        cast(coalesce(sum(gpu_node_seconds), 0) as bigint) / 86400e0 as gpu_node_days,
        cast(coalesce(sum(case when is_infra_failure and is_gpu_attempt then 1 else 0 end), 0) as bigint)
            as infra_failures,
        cast(coalesce(sum(case when is_open then 1 else 0 end), 0) as bigint) as open_attempts,
        cast(coalesce(sum(case when outcome = 'unknown' then 1 else 0 end), 0) as bigint) as unknown_states
    from attempts

),

node_totals as (

    select cast(count(distinct case when not nodes.is_gpu_node then node_days.node end) as bigint) as cpu_only_nodes
    from {{ ref('fct_node_days') }} as node_days
    inner join {{ ref('dim_nodes') }} as nodes on nodes.node = node_days.node
    where node_days.month = {{ month }}

),

event_totals as (

    select
        count(*) as health_events,
        cast(coalesce(sum(case when category = 'unclassified' then 1 else 0 end), 0) as bigint)
            as unclassified_health_events
    from health_events

)

select
    parameters.month,
    attempt_totals.attempts,
    attempt_totals.gpu_attempts,
    attempt_totals.cpu_only_attempts,
    attempt_totals.gpu_hours,
    attempt_totals.gpu_node_days,
    attempt_totals.infra_failures,
    attempt_totals.open_attempts,
    attempt_totals.unknown_states,
    event_totals.health_events,
    event_totals.unclassified_health_events,
    node_totals.cpu_only_nodes,
    {{ share('event_totals.unclassified_health_events', 'event_totals.health_events') }} as unclassified_share
from {{ source('run', 'months') }} as parameters
cross join attempt_totals
cross join event_totals
cross join node_totals
where parameters.month = {{ month }}
{% endcall %}
