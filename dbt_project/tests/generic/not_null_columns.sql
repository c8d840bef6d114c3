{% test not_null_columns(model, columns) %}
-- Every listed column has a value on every row: one test (and one dbt node) per model rather
-- than one per column, each row of its result a column with nulls and how many.
{% for column in columns %}
select
    '{{ column }}' as column_name,
    count(*) as null_rows
from {{ model }}
where {{ column }} is null
having count(*) > 0
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% endtest %}
