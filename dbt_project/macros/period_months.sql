{% macro period_rows(relation, alias='facts', as_final=false) -%}
    {{ ref('dim_period_months') }} as periods
    inner join {{ relation }} as {{ alias }} on {{ alias }}.month = periods.month
    {%- if as_final %}
        and {{ alias }}.final_month <= periods.last_month
        and ({{ alias }}.final_until is null or {{ alias }}.final_until > periods.last_month)
    {%- endif %}
{%- endmacro %}
