-- The infrastructure failures the attribution named a node as the cause of, in the months asked.
select
    month,
    attempt_id,
    job_id,
    failed_at,
    cause_category,
    gpus,
    n_nodes,
    size_bucket
from fct_failures
where cause_node = {{ param("node") }} and month in (select unnest({{ param("months") }}::varchar[]))
order by failed_at, job_id
