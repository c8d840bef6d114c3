-- The attempts preempted to make room for an attempt, a restart after an infrastructure failure
-- (fct_second_order_preemptions: the failures' second-order cost).
select
    job_id_raw,
    gpus,
    preempted_at,
    runtime_seconds
from fct_second_order_preemptions
where month = {{ param("month") }} and restart_attempt_id = {{ param("attempt_id") }}
order by preempted_at, job_id_raw
