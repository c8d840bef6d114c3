{#- A quarantine's {field, value, reason}: field a name, value and reason expressions. -#}
{%- macro problem(field, value, reason) -%}
{ 'field': '{{ field }}', 'value': coalesce(cast({{ value }} as varchar), ''), 'reason': {{ reason }} }
{%- endmacro -%}
{#- Why a record cannot carry the UTC time `time` (clock.LocalClock.implausible), NULL when it can. -#}
{%- macro implausible(time) -%}
case when {{ time }} < {{ param("earliest") }} then {{ param("too_early") }} when {{ time }} > {{ param("latest") }} then {{ param("too_late") }} end
{%- endmacro %}
-- Temp table attempt_problems(source_line, field, value, reason): the staged records to quarantine,
-- the first problem of each: a host list refused (refused_host_lists_why), NNodes other than the
-- list's size (but for NNodes 0: job_records__node_count_repairs), a FailedNode that is not a host
-- name, a time outside the clock's window, a state without the times it needs, times out of order
-- (skew_seconds: the DST jump that may put two local times out of order when read as UTC).
-- Template variable utc: each time column in UTC, an expression naming the staged columns bare
-- (s is the only table that has them); the values shown are the file's (local) times.
create or replace temp table attempt_problems as
select
    source_line,
    problem.field,
    problem.value,
    problem.reason
from (
    select
        s.source_line,
        case
            -- a refused list is shown cut at 1,000 characters (it may be a megabyte)
            when bad.reason is not null
                then {{ problem("NodeList", "case when length(s.node_list) > 1000 then left(s.node_list, 1000) || '...' else s.node_list end", "bad.reason") }}
            when l.size is not null and (s.n_nodes is distinct from l.size) and not (s.n_nodes = 0 and l.size > 0)
                then {{ problem("NNodes", "s.n_nodes", "format('the NodeList names {:,} nodes', l.size)") }}
            when s.failed_node is not null and not regexp_full_match(s.failed_node, {{ param("node_name") }})
                then {{ problem("FailedNode", "s.failed_node", "'not a host name'") }}
            {%- for column, field in [("submit_at", "Submit"), ("start_at", "Start"), ("end_at", "End"),
                                      ("eligible_at", "Eligible")] %}
            when ({{ implausible(utc[column]) }}) is not null
                then {{ problem(field, "s." ~ column, implausible(utc[column])) }}
            {%- endfor %}
            -- the states of an attempt that ran and ended (a Start and an End), and the other ended
            -- ones (an End: a job cancelled or past its deadline while pending never started); open
            -- states (RUNNING, PENDING, ...) have no End yet. Each state's outcome is dbt's (fct_attempts).
            when
                s.state in ('COMPLETED', 'FAILED', 'TIMEOUT', 'OUT_OF_MEMORY', 'NODE_FAIL', 'PREEMPTED', 'REQUEUED')
                and s.start_at is null
                then {{ problem("Start", "s.start_at", "'a ' || s.state || ' attempt ran: it needs a Start'") }}
            when
                s.state in (
                    'COMPLETED', 'FAILED', 'TIMEOUT', 'OUT_OF_MEMORY', 'NODE_FAIL', 'PREEMPTED', 'REQUEUED',
                    'CANCELLED', 'DEADLINE', 'BOOT_FAIL'
                )
                and s.end_at is null
                then {{ problem("End", "s.end_at", "'a ' || s.state || ' attempt ended: it needs an End'") }}
            when s.state = 'RUNNING' and s.end_at is not null
                then {{ problem("End", "s.end_at", "'a RUNNING attempt has no End yet'") }}
            when s.state = 'RUNNING' and s.start_at is null
                then {{ problem("Start", "s.start_at", "'a RUNNING attempt needs a Start'") }}
            when {{ utc.start_at }} < {{ utc.submit_at }} - to_seconds({{ param("skew_seconds") }})
                then {{ problem("Start", "s.start_at", "'before the Submit ' || cast(s.submit_at as varchar)") }}
            when {{ utc.end_at }} < {{ utc.start_at }} - to_seconds({{ param("skew_seconds") }})
                then {{ problem("End", "s.end_at", "'before the Start ' || cast(s.start_at as varchar)") }}
            when {{ utc.end_at }} < {{ utc.submit_at }} - to_seconds({{ param("skew_seconds") }})
                then {{ problem("End", "s.end_at", "'before the Submit ' || cast(s.submit_at as varchar)") }}
            when s.gpus < 0 or s.req_gpus < 0
                then {{ problem("AllocTRES", "s.gpus", "'a GPU count is negative'") }}
        end as problem
    from attempts_staged as s
    left join refused_host_lists_why as bad on s.node_list = bad.node_list
    left join host_lists as l on s.node_list = l.node_list
)
where problem is not null
