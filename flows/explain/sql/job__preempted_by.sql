-- The job whose restart after an infrastructure failure each attempt asked was preempted for.
select
    preemptions.attempt_id,
    restarts.job_id_raw
from fct_second_order_preemptions as preemptions
inner join fct_attempts as restarts
    on preemptions.month = restarts.month and preemptions.restart_attempt_id = restarts.attempt_id
where
    preemptions.month = {{ param("month") }}
    and list_contains({{ param("attempts") }}::varchar[], preemptions.attempt_id)
