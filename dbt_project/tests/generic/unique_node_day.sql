{% test unique_node_day(model) %}
select node, day, count(*) as rows_with_key
from {{ model }}
group by node, day
having count(*) > 1
{% endtest %}
