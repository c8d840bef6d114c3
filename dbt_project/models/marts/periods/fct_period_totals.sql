-- Each period (dim_periods) in totals, summed over its months built: attempts, split into GPU
-- attempts and CPU-only ones (is_gpu_attempt, the rule of int_attempts_month_scoped: the GPU figures
-- count only the former), GPU-hours, the GPU attempts' node-days and infrastructure failures,
-- attempts still running at a month's dump, attempts whose Slurm state the taxonomy does not know,
-- the health events with the share no taxonomy rule classified, and the CPU-only nodes seen (not
-- dim_nodes.is_gpu_node; the most of any month, as the fleet's nodes). An attempt across a month end
-- counts in each month it touches (open in the earlier ones).

with attempts as (

    select
        month,
        count(*) as attempts,
        cast(coalesce(sum(case when is_gpu_attempt then 1 else 0 end), 0) as bigint) as gpu_attempts,
        cast(coalesce(sum(case when is_gpu_attempt then 0 else 1 end), 0) as bigint) as cpu_only_attempts,
        cast(coalesce(sum(gpu_seconds), 0) as bigint) as gpu_seconds,
        -- gpu_node_seconds is 0 for a CPU-only attempt: fct_period_node_failure_rate's all_node_days
        cast(coalesce(sum(gpu_node_seconds), 0) as bigint) as gpu_node_seconds,
        cast(coalesce(sum(case when is_infra_failure and is_gpu_attempt then 1 else 0 end), 0) as bigint)
            as infra_failures,
        cast(coalesce(sum(case when is_open then 1 else 0 end), 0) as bigint) as open_attempts,
        cast(coalesce(sum(case when outcome = 'unknown' then 1 else 0 end), 0) as bigint) as unknown_states
    from {{ ref('fct_attempts') }}
    group by month

),

nodes as (

    select
        node_days.month,
        cast(count(distinct case when not dim_nodes.is_gpu_node then node_days.node end) as bigint) as cpu_only_nodes
    from {{ ref('fct_node_days') }} as node_days
    inner join {{ ref('dim_nodes') }} as dim_nodes on dim_nodes.node = node_days.node
    group by node_days.month

),

events as (

    select
        month,
        count(*) as health_events,
        cast(coalesce(sum(case when category = 'unclassified' then 1 else 0 end), 0) as bigint)
            as unclassified_health_events
    from {{ ref('fct_health_events') }}
    group by month

),

by_month as (

    select
        months.month,
        attempts.attempts,
        attempts.gpu_attempts,
        attempts.cpu_only_attempts,
        attempts.gpu_seconds,
        attempts.gpu_node_seconds,
        attempts.infra_failures,
        attempts.open_attempts,
        attempts.unknown_states,
        events.health_events,
        events.unclassified_health_events,
        nodes.cpu_only_nodes
    from {{ ref('fct_months_built') }} as months
    left join attempts on attempts.month = months.month
    left join nodes on nodes.month = months.month
    left join events on events.month = months.month

),

summed as (

    select
        periods.period_id,
        periods.kind,
        periods.first_month,
        periods.last_month,
        periods.window_months,
        count(*) as months_built,
        cast(coalesce(sum(facts.attempts), 0) as bigint) as attempts,
        cast(coalesce(sum(facts.gpu_attempts), 0) as bigint) as gpu_attempts,
        cast(coalesce(sum(facts.cpu_only_attempts), 0) as bigint) as cpu_only_attempts,
        cast(coalesce(sum(facts.gpu_seconds), 0) as bigint) / 3600e0 as gpu_hours,
        cast(coalesce(sum(facts.gpu_node_seconds), 0) as bigint) / 86400e0 as gpu_node_days,
        cast(coalesce(sum(facts.infra_failures), 0) as bigint) as infra_failures,
        cast(coalesce(sum(facts.open_attempts), 0) as bigint) as open_attempts,
        cast(coalesce(sum(facts.unknown_states), 0) as bigint) as unknown_states,
        cast(coalesce(sum(facts.health_events), 0) as bigint) as health_events,
        cast(coalesce(sum(facts.unclassified_health_events), 0) as bigint) as unclassified_health_events,
        cast(coalesce(max(facts.cpu_only_nodes), 0) as bigint) as cpu_only_nodes
    from {{ period_rows('by_month') }}
    group by periods.period_id, periods.kind, periods.first_month, periods.last_month, periods.window_months

)

select
    summed.*,
    {{ share('unclassified_health_events', 'health_events') }} as unclassified_share
from summed
