-- The job whose restart after an infrastructure failure an attempt was preempted for, if it was.
select restarts.job_id_raw
from fct_second_order_preemptions as preemptions
inner join fct_attempts as restarts
    on preemptions.month = restarts.month and preemptions.restart_attempt_id = restarts.attempt_id
where preemptions.month = {{ param("month") }} and preemptions.attempt_id = {{ param("attempt_id") }}
