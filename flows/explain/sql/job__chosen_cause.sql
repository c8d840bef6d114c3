-- The incident the attribution named as an attempt's cause: its node, first event and category.
select
    cause_node,
    cause_event_at,
    cause_category
from fct_failures
where month = {{ param("month") }} and attempt_id = {{ param("attempt_id") }}
