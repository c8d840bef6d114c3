-- The fct_attempts rows of the jobs asked, in the months asked: those whose JobID or JobIDRaw is an
-- id asked, and (`prefixes` of them) those whose JobID starts with a bare id's `<id>_` or `<id>+`
-- (its array tasks, its het components). One select per column matched, in a union: DuckDB pushes
-- a list_contains or starts_with on one column into the scan (min/max per row group), which the
-- same tests or-ed over two columns, or an IN (subquery), does not: 0.04-0.2 s instead of 1-2 s on
-- 12 months of 1.5M attempts (bench/README.md, "explain and node on 12 months").
{% set columns %}
    attempt_id,
    month,
    job_id,
    job_id_raw,
    job_run_id,
    job_name,
    user_name,
    partition,
    slurm_state,
    outcome,
    cause_category,
    failure_domain,
    gpus,
    n_nodes,
    size_bucket,
    submit_at,
    start_at,
    end_at,
    runtime_seconds,
    gpu_hours,
    source_file,
    source_line
{% endset %}
select {{ columns }}
from fct_attempts
where list_contains({{ param("months") }}::varchar[], month) and list_contains({{ param("ids") }}::varchar[], job_id)
union
select {{ columns }}
from fct_attempts
where
    list_contains({{ param("months") }}::varchar[], month)
    and list_contains({{ param("ids") }}::varchar[], job_id_raw)
{% for i in range(prefixes) %}
union
select {{ columns }}
from fct_attempts
where list_contains({{ param("months") }}::varchar[], month) and starts_with(job_id, {{ param("prefix_" ~ i) }})
{% endfor %}
order by submit_at, start_at, job_id, month
