{% macro share(part, whole) -%}
    case when ({{ whole }}) > 0 then ({{ part }}) * 1e0 / ({{ whole }}) end
{%- endmacro %}
