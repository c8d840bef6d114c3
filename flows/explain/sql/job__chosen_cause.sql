-- The incident the attribution named as each attempt's cause: its node, first event and category.
select
    attempt_id,
    cause_node,
    cause_event_at,
    cause_category
from fct_failures
where month = {{ param("month") }} and list_contains({{ param("attempts") }}::varchar[], attempt_id)
