{% test unique_per_month(model, column_name) %}
-- A monthly mart keeps every month built: a key is unique within its month, not across months
-- (a job run or a node appears again in the next month).
select month, {{ column_name }}, count(*) as rows_with_key
from {{ model }}
group by month, {{ column_name }}
having count(*) > 1
{% endtest %}
