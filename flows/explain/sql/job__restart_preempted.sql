-- The attempts preempted to make room for each attempt asked, a restart after an infrastructure
-- failure (fct_second_order_preemptions: the failures' second-order cost).
select
    restart_attempt_id,
    job_id_raw,
    gpus,
    preempted_at,
    runtime_seconds
from fct_second_order_preemptions
where month = {{ param("month") }} and list_contains({{ param("attempts") }}::varchar[], restart_attempt_id)
order by preempted_at, job_id_raw
