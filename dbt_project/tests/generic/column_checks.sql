{% test column_checks(model, not_null=[], unique_keys=[], accepted_values={}, references={}) %}
{#- A model's column rules in one test (one dbt node per model: each node costs dbt ~20 ms of
    Python, more than the query on a small month): the listed columns have a value on every row,
    each of `unique_keys` (a list of columns) is a key, each column of `accepted_values` holds
    only its listed values (nulls allowed), and each column of `references` ({to: ref(...), field:
    ...}, as dbt's `relationships` test) holds only values of that field of that model (nulls
    allowed). Null and value checks share one scan. Each row of the result is a rule broken and on
    how many rows (for a key: how many key values repeat). -#}
{%- set counted = [] -%}
{%- for column in not_null -%}
    {%- do counted.append((column ~ ' is null', column ~ ' is null')) -%}
{%- endfor -%}
{%- for column, values in accepted_values.items() -%}
    {%- set listed = [] -%}
    {%- for value in values -%}{%- do listed.append("'" ~ value ~ "'") -%}{%- endfor -%}
    {%- do counted.append((column ~ ' not in (' ~ values | join(', ') ~ ')', column ~ ' not in (' ~ listed | join(', ') ~ ')')) -%}
{%- endfor -%}
{%- set branches = [] -%}
{%- if counted -%}
    {%- set rows -%}
    with counts as (
        select
            {%- for rule, condition in counted %}
            sum(case when {{ condition }} then 1 else 0 end) as broken_{{ loop.index }}{{ ',' if not loop.last }}
            {%- endfor %}
        from {{ model }}
    )
    {% for rule, condition in counted -%}
    select '{{ rule | replace("'", "''") }}' as broken_rule, broken_{{ loop.index }} as failing_rows
    from counts where broken_{{ loop.index }} > 0
    {% if not loop.last %}union all{% endif %}
    {% endfor -%}
    {%- endset -%}
    {%- do branches.append(rows) -%}
{%- endif -%}
{%- for key in unique_keys -%}
    {%- set rows -%}
    select 'unique ({{ key | join(', ') }})' as broken_rule, count(*) as failing_rows
    from (
        select {{ key | join(', ') }}
        from {{ model }}
        group by {{ key | join(', ') }}
        having count(*) > 1
    ) as repeated
    having count(*) > 0
    {%- endset -%}
    {%- do branches.append(rows) -%}
{%- endfor %}
{%- for column, parent in references.items() -%}
    {%- set rows -%}
    select '{{ column }} not in {{ parent.to.identifier }}.{{ parent.field }}' as broken_rule, count(*) as failing_rows
    from {{ model }}
    where {{ column }} is not null
        and {{ column }} not in (select {{ parent.field }} from {{ parent.to }} where {{ parent.field }} is not null)
    having count(*) > 0
    {%- endset -%}
    {%- do branches.append(rows) -%}
{%- endfor %}
{{ branches | join('\nunion all\n') }}
{% endtest %}
