-- Each period (dim_periods) in totals over its months built: attempts, split into GPU attempts and
-- CPU-only ones (is_gpu_attempt, the rule of int_attempts_month_scoped: the GPU figures count only
-- the former), the distinct GPU jobs, GPU-hours, the GPU attempts' node-days and infrastructure
-- failures, attempts still running at the period's end, attempts whose Slurm state the taxonomy
-- does not know, the health events with the share no taxonomy rule classified, and the CPU-only
-- nodes seen (not dim_nodes.is_gpu_node; the most of any month, as the fleet's nodes). Each attempt
-- and job counts once, as its final row in the period (fct_range_attempts): an attempt across a
-- month end is open in a month's period and counts with its outcome in a range holding its end;
-- exposure is each month's part, summed.

-- fct_range_attempts' pairs summed by what decides the periods that take them and whether they
-- count the job: a few rows a month, whatever the attempts
with range_sums as (

    {{ range_sums(['job_until']) }}

),

attempts as (

    select
        periods.period_id,
        cast(coalesce(sum(facts.attempts), 0) as bigint) as attempts,
        cast(coalesce(sum(facts.gpu_attempts), 0) as bigint) as gpu_attempts,
        cast(coalesce(sum(facts.attempts - facts.gpu_attempts), 0) as bigint) as cpu_only_attempts,
        cast(coalesce(sum(case when facts.job_until > periods.last_month then facts.pairs else 0 end), 0) as bigint)
            as gpu_jobs,
        cast(coalesce(sum(facts.gpu_seconds), 0) as bigint) as gpu_seconds,
        cast(coalesce(sum(facts.gpu_node_seconds), 0) as bigint) as gpu_node_seconds,
        cast(coalesce(sum(facts.infra_failures), 0) as bigint) as infra_failures,
        cast(coalesce(sum(facts.open_attempts), 0) as bigint) as open_attempts,
        cast(coalesce(sum(facts.unknown_states), 0) as bigint) as unknown_states
    from {{ period_rows('range_sums', as_final=true) }}
    group by periods.period_id

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
        events.health_events,
        events.unclassified_health_events,
        nodes.cpu_only_nodes
    from {{ ref('fct_months_built') }} as months
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
        cast(coalesce(sum(facts.health_events), 0) as bigint) as health_events,
        cast(coalesce(sum(facts.unclassified_health_events), 0) as bigint) as unclassified_health_events,
        cast(coalesce(max(facts.cpu_only_nodes), 0) as bigint) as cpu_only_nodes
    from {{ period_rows('by_month') }}
    group by periods.period_id, periods.kind, periods.first_month, periods.last_month, periods.window_months

)

select
    summed.period_id,
    summed.kind,
    summed.first_month,
    summed.last_month,
    summed.window_months,
    summed.months_built,
    coalesce(attempts.attempts, 0) as attempts,
    coalesce(attempts.cpu_only_attempts, 0) as cpu_only_attempts,
    coalesce(attempts.gpu_attempts, 0) as gpu_attempts,
    coalesce(attempts.gpu_jobs, 0) as gpu_jobs,
    coalesce(attempts.gpu_seconds, 0) / 3600e0 as gpu_hours,
    coalesce(attempts.gpu_node_seconds, 0) / 86400e0 as gpu_node_days,
    coalesce(attempts.infra_failures, 0) as infra_failures,
    coalesce(attempts.open_attempts, 0) as open_attempts,
    coalesce(attempts.unknown_states, 0) as unknown_states,
    summed.health_events,
    summed.unclassified_health_events,
    summed.cpu_only_nodes,
    {{ share('summed.unclassified_health_events', 'summed.health_events') }} as unclassified_share
from summed
left join attempts on attempts.period_id = summed.period_id
