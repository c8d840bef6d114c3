{% test unique_combination(model, columns) %}
-- The columns together are a key of the model.
select {{ columns | join(', ') }}, count(*) as rows_with_key
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
