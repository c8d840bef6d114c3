-- A month's infrastructure failures of attempts of at least min_gpus GPUs: the archive explains each.
select
    job_id,
    attempt_id,
    gpus,
    cause_category,
    failed_at
from fct_failures
where month = {{ param("month") }} and gpus >= {{ param("min_gpus") }}
order by failed_at, job_id
