{#- Engine-specific SQL, one adapter-dispatched macro each: DuckDB's form is the default; another
    engine adds its `<engine>__<name>` beside it (e.g. Spark's max_by, rlike, sequence, collect_set,
    arrays_overlap). Dates and differences use dbt's cross-database macros (dbt.dateadd,
    dbt.datediff, dbt.date_trunc) directly in the models. -#}

{#- The value of `value` on the row with the largest `order_by`. -#}
{% macro value_at_max(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_max', 'cluster_reliability')(value, order_by)) }}
{%- endmacro %}

{% macro default__value_at_max(value, order_by) -%}
    arg_max({{ value }}, {{ order_by }})
{%- endmacro %}

{#- Whether `text` contains a match of the regular expression `pattern`. -#}
{% macro regex_contains(text, pattern) -%}
    {{ return(adapter.dispatch('regex_contains', 'cluster_reliability')(text, pattern)) }}
{%- endmacro %}

{% macro default__regex_contains(text, pattern) -%}
    regexp_matches({{ text }}, {{ pattern }})
{%- endmacro %}

{#- A relation `alias(day_start)`: one row per day from `first_day` up to, not including, `end`. -#}
{% macro day_spine(first_day, end, alias) -%}
    {{ return(adapter.dispatch('day_spine', 'cluster_reliability')(first_day, end, alias)) }}
{%- endmacro %}

{% macro default__day_spine(first_day, end, alias) -%}
    generate_series({{ first_day }}, {{ dbt.dateadd('day', -1, end) }}, interval 1 day) as {{ alias }} (day_start)
{%- endmacro %}

{#- The nodes of each attempt as one value, and whether two such values share a node. -#}
{% macro node_set(node) -%}
    {{ return(adapter.dispatch('node_set', 'cluster_reliability')(node)) }}
{%- endmacro %}

{% macro default__node_set(node) -%}
    list({{ node }})
{%- endmacro %}

{% macro node_sets_overlap(left, right) -%}
    {{ return(adapter.dispatch('node_sets_overlap', 'cluster_reliability')(left, right)) }}
{%- endmacro %}

{% macro default__node_sets_overlap(left, right) -%}
    list_has_any({{ left }}, {{ right }})
{%- endmacro %}

{#- The median of `value` (interpolated between the two middle values of an even count). -#}
{% macro median(value) -%}
    {{ return(adapter.dispatch('median', 'cluster_reliability')(value)) }}
{%- endmacro %}

{% macro default__median(value) -%}
    quantile_cont({{ value }}, 0.5)
{%- endmacro %}

{#- The mean of `value`, adding in the order of `order_by`: floating-point sums depend on their
    order, and a month's figures must not depend on where its rows lie in the table. -#}
{% macro ordered_mean(value, order_by) -%}
    {{ return(adapter.dispatch('ordered_mean', 'cluster_reliability')(value, order_by)) }}
{%- endmacro %}

{% macro default__ordered_mean(value, order_by) -%}
    avg({{ value }} order by {{ order_by }})
{%- endmacro %}
