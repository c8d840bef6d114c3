-- Exposure and signals by node and UTC day of each month of the build: busy time of the attempts that ran on
-- the node (split at day and month boundaries), GPU-busy time, critical and warning health
-- events, and the infrastructure failures the node was named as the cause of. A node appears on
-- a day when it ran something or logged something: every node seen, CPU-only nodes included. The
-- GPU attempts it ran and the GPU events it logged (gpu_attempts, gpu_events) are what make it a GPU
-- node (dim_nodes.is_gpu_node), the nodes of the fleet's fault rate and of the lemon fleet. The
-- lemon signals' counts of attempts and failures are over GPU attempts only (is_gpu_attempt;
-- fct_failures holds only theirs).

with attempts as (

    select
        month,
        attempt_id,
        exposure_start,
        exposure_end,
        gpus,
        n_nodes,
        end_at,
        is_open,
        is_gpu_attempt
    from {{ ref('int_attempts_month_scoped') }}
    where exposure_start is not null and exposure_end > exposure_start

),

attempt_nodes as (

    select * from {{ ref('stg_slurm__attempt_nodes') }}

),

days as (

    select
        months.month,
        cast(spine.day_start as timestamp) as day_start
    from {{ source('run', 'months') }} as months
    cross join {{ day_spine('months.month_start', 'months.month_end', 'spine') }}

),

busy as (

    select
        attempts.month,
        attempt_nodes.node,
        days.day_start,
        -- an attempt names each node once (the landing refuses a host list naming one twice)
        count(*) as attempts,
        cast(sum(case when attempts.is_gpu_attempt then 1 else 0 end) as bigint) as gpu_attempts,
        cast(sum({{ dbt.datediff(
            'greatest(attempts.exposure_start, days.day_start)',
            'least(attempts.exposure_end, ' ~ dbt.dateadd('day', 1, 'days.day_start') ~ ')',
            'second') }}) as bigint) as busy_seconds,
        cast(sum({{ dbt.datediff(
            'greatest(attempts.exposure_start, days.day_start)',
            'least(attempts.exposure_end, ' ~ dbt.dateadd('day', 1, 'days.day_start') ~ ')',
            'second') }} * attempts.gpus / greatest(attempts.n_nodes, 1)) as bigint) as gpu_busy_seconds,
        -- the denominator of the lemon signal single_node_node_failure_rate, GPU attempts only (one that ends
        -- at midnight exactly has no busy time on the day it ends: it is not counted)
        cast(sum(case
            when
                attempts.is_gpu_attempt
                and attempts.n_nodes = 1
                and not attempts.is_open
                and attempts.end_at >= days.day_start
                and attempts.end_at < {{ dbt.dateadd('day', 1, 'days.day_start') }}
                then 1
            else 0
        end) as bigint) as single_node_attempts_ended
    from attempts
    inner join attempt_nodes
        on attempt_nodes.month = attempts.month and attempt_nodes.attempt_id = attempts.attempt_id
    inner join days
        on
            days.month = attempts.month
            and days.day_start < attempts.exposure_end
            and {{ dbt.dateadd('day', 1, 'days.day_start') }} > attempts.exposure_start
    group by attempts.month, attempt_nodes.node, days.day_start

),

events as (

    select
        events.month,
        events.node,
        {{ dbt.date_trunc('day', 'events.event_at') }} as day_start,
        cast(sum(case when events.severity = 'critical' then 1 else 0 end) as bigint) as critical_events,
        cast(sum(case when events.severity = 'warning' then 1 else 0 end) as bigint) as warning_events,
        -- only a node with NVIDIA GPUs logs a GPU's own report (an Xid, a DCGM health report: the
        -- seed landed_sources says which sources are)
        cast(sum(case when sources.gpu_report then 1 else 0 end) as bigint) as gpu_events
    from {{ ref('int_health_events_classified') }} as events
    left join {{ ref('landed_sources') }} as sources on sources.source = events.source
    inner join {{ source('run', 'months') }} as months
        on
            months.month = events.month
            and events.event_at >= months.month_start
            and events.event_at < months.month_end
    group by events.month, events.node, {{ dbt.date_trunc('day', 'events.event_at') }}

),

failures as (

    select
        month,
        cause_node as node,
        {{ dbt.date_trunc('day', 'failed_at') }} as day_start,
        count(*) as infra_failures
    from {{ ref('fct_failures') }}
    where month in {{ run_months() }} and cause_node is not null
    group by month, cause_node, {{ dbt.date_trunc('day', 'failed_at') }}

),

node_days as (

    select
        month,
        node,
        day_start
    from busy
    union
    select
        month,
        node,
        day_start
    from events
    union
    select
        month,
        node,
        day_start
    from failures

)

select
    node_days.month,
    {{ run_parameter('cluster') }} as cluster,
    node_days.node,
    cast(node_days.day_start as date) as day,
    coalesce(busy.attempts, 0) as attempts,
    coalesce(busy.gpu_attempts, 0) as gpu_attempts,
    coalesce(busy.busy_seconds, 0) as busy_seconds,
    coalesce(busy.gpu_busy_seconds, 0) as gpu_busy_seconds,
    coalesce(busy.single_node_attempts_ended, 0) as single_node_attempts_ended,
    coalesce(events.critical_events, 0) as critical_events,
    coalesce(events.warning_events, 0) as warning_events,
    coalesce(events.gpu_events, 0) as gpu_events,
    coalesce(failures.infra_failures, 0) as infra_failures
from node_days
left join busy on busy.month = node_days.month and busy.node = node_days.node and busy.day_start = node_days.day_start
left join events on events.month = node_days.month and events.node = node_days.node and events.day_start = node_days.day_start
left join failures on failures.month = node_days.month and failures.node = node_days.node and failures.day_start = node_days.day_start
