-- The fct_attempts rows of the jobs asked, in the months asked, oldest first: those whose JobID or
-- JobIDRaw is an id asked, and the array tasks and het components of each bare id asked (`whole`).
select
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
from fct_attempts
where
    month in (select unnest({{ param("months") }}::varchar[]))
    and (
        job_id in (select unnest({{ param("ids") }}::varchar[]))
        or job_id_raw in (select unnest({{ param("ids") }}::varchar[]))
        or regexp_extract(job_id, '^([0-9]+)[_+]', 1) in (select unnest({{ param("whole") }}::varchar[]))
    )
order by submit_at, start_at, job_id, month
