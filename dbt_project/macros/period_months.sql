{% macro period_rows(relation, alias='facts') -%}
    {{ ref('dim_period_months') }} as periods
    inner join {{ relation }} as {{ alias }} on {{ alias }}.month = periods.month
{%- endmacro %}
