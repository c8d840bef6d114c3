-- Failed, node-failed and requeued attempts matched to critical health events on their nodes in
-- [end - attr_before, end + attr_after] (docs/methodology.md "Attribution": this model is the rule).
-- An event known only to a scrape step happened in (event_at - step, event_at]: it matches when that
-- interval meets the window, and its distance from the End is the interval's.
-- The matched events of one node are one incident, caused by its first event; the incident nearest
-- the attempt's End is the cause; at equal distance the better cause_priority, then the earlier
-- incident, then the node's name. Every match is counted and the co-occurring categories are listed. A requeue the records mark as made by a user or an admin
-- (AdminComment `requeue=user` / `requeue=admin`) is never a candidate: whatever drained nearby,
-- it is not the infrastructure's failure.

with candidates as (

    select
        attempts.month,
        attempts.attempt_id,
        attempts.end_at,
        {{ dbt.dateadd('minute', '-parameters.attr_before_minutes', 'attempts.end_at') }} as window_start,
        {{ dbt.dateadd('minute', 'parameters.attr_after_minutes', 'attempts.end_at') }} as window_end
    from {{ ref('int_attempts_month_scoped') }} as attempts
    cross join {{ source('run', 'parameters') }} as parameters
    where
        not attempts.is_open
        and attempts.slurm_state in ('FAILED', 'NODE_FAIL', 'BOOT_FAIL', 'REQUEUED')
        and not (
            attempts.slurm_state = 'REQUEUED'
            and coalesce({{ regex_contains('attempts.admin_comment', "'(^|[\\s,;])requeue=(user|admin)([\\s,;]|$)'") }}, false)
        )

),

critical_events as (

    select
        *,
        -- the earliest it can have happened (0 uncertainty when a fixture gives none)
        {{ dbt.dateadd('second', '-coalesce(event_uncertainty_seconds, 0)', 'event_at') }} as earliest_at
    from {{ ref('int_health_events_classified') }}
    where severity = 'critical'

),

-- The candidates' nodes first (a few thousand rows): left to itself, DuckDB joined every
-- candidate to every critical event in its window before looking at nodes (1.4 s instead of 0.3 s
-- on a 1.5M-attempt month).
candidate_nodes as {{ materialized_cte() }} (

    select
        candidates.month,
        candidates.attempt_id,
        candidates.end_at,
        candidates.window_start,
        candidates.window_end,
        attempt_nodes.node
    from candidates
    inner join {{ ref('stg_slurm__attempt_nodes') }} as attempt_nodes
        on attempt_nodes.month = candidates.month and attempt_nodes.attempt_id = candidates.attempt_id

),

matches as (

    select
        candidate_nodes.month,
        candidate_nodes.attempt_id,
        critical_events.event_id,
        critical_events.category,
        critical_events.failure_domain,
        critical_events.cause_priority,
        critical_events.event_at,
        critical_events.node,
        case
            when candidate_nodes.end_at > critical_events.event_at
                then {{ dbt.datediff('critical_events.event_at', 'candidate_nodes.end_at', 'second') }}
            when candidate_nodes.end_at < critical_events.earliest_at
                then {{ dbt.datediff('candidate_nodes.end_at', 'critical_events.earliest_at', 'second') }}
            else 0
        end as seconds_from_end
    from candidate_nodes
    inner join critical_events
        on
            critical_events.month = candidate_nodes.month
            and critical_events.node = candidate_nodes.node
            and critical_events.event_at >= candidate_nodes.window_start
            and critical_events.earliest_at <= candidate_nodes.window_end

),

-- One incident per (attempt, node): its distance is its event nearest the End, its cause its first
-- event (a fault's later signals, such as DCGM's PCIe failure after Xid 79, are its consequences).
incidents as (

    select
        *,
        min(seconds_from_end) over (partition by month, attempt_id, node) as incident_seconds_from_end,
        row_number() over (partition by month, attempt_id, node order by event_at, cause_priority, event_id) as node_rank,
        count(*) over (partition by month, attempt_id) as n_matched_events
    from matches

),

ranked as (

    select
        *,
        row_number() over (
            partition by month, attempt_id order by incident_seconds_from_end, cause_priority, event_at, node
        ) as cause_rank
    from incidents
    where node_rank = 1

),

distinct_categories as (

    select distinct
        month,
        attempt_id,
        category
    from matches

),

co_occurring as (

    select
        month,
        attempt_id,
        {{ sorted_text_list('category', "','") }} as matched_categories
    from distinct_categories
    group by month, attempt_id

)

select
    ranked.month,
    ranked.attempt_id,
    ranked.category as cause_category,
    ranked.failure_domain,
    ranked.node as cause_node,
    ranked.event_at as cause_event_at,
    ranked.n_matched_events,
    co_occurring.matched_categories
from ranked
inner join co_occurring on co_occurring.month = ranked.month and co_occurring.attempt_id = ranked.attempt_id
where ranked.cause_rank = 1
