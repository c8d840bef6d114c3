-- The records of {{ source }}(job_id, submit_at, start_at, end_at), job steps left out: how many,
-- and the span their times run over (the earliest Submit, the latest Submit, Start or End).
select
    count(*) as records,
    min(submit_at) as first_at,
    max(greatest(submit_at, start_at, end_at)) as last_at
from {{ source }}
where submit_at is not null and not contains(coalesce(job_id, ''), '.')
