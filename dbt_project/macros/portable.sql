{#- Engine-specific SQL, one adapter-dispatched macro each: DuckDB's form is the default; another
    engine adds its `<engine>__<name>` beside it (e.g. Spark's max_by, rlike, sequence, collect_set,
    arrays_overlap). Dates and differences use dbt's cross-database macros (dbt.dateadd,
    dbt.datediff, dbt.date_trunc) directly in the models. Each macro's description: _macros.yml. -#}

{% macro value_at_max(value, order_by) -%}
    {{ return(adapter.dispatch('value_at_max', 'cluster_reliability')(value, order_by)) }}
{%- endmacro %}

{% macro default__value_at_max(value, order_by) -%}
    arg_max({{ value }}, {{ order_by }})
{%- endmacro %}

{% macro regex_contains(text, pattern) -%}
    {{ return(adapter.dispatch('regex_contains', 'cluster_reliability')(text, pattern)) }}
{%- endmacro %}

{% macro default__regex_contains(text, pattern) -%}
    regexp_matches({{ text }}, {{ pattern }})
{%- endmacro %}

{% macro day_spine(first_day, end, alias) -%}
    {{ return(adapter.dispatch('day_spine', 'cluster_reliability')(first_day, end, alias)) }}
{%- endmacro %}

{% macro default__day_spine(first_day, end, alias) -%}
    generate_series({{ first_day }}, {{ dbt.dateadd('day', -1, end) }}, interval 1 day) as {{ alias }} (day_start)
{%- endmacro %}

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

{% macro median(value) -%}
    {{ return(adapter.dispatch('median', 'cluster_reliability')(value)) }}
{%- endmacro %}

{% macro default__median(value) -%}
    quantile_cont({{ value }}, 0.5)
{%- endmacro %}

{% macro ordered_mean(value, order_by) -%}
    {{ return(adapter.dispatch('ordered_mean', 'cluster_reliability')(value, order_by)) }}
{%- endmacro %}

{% macro default__ordered_mean(value, order_by) -%}
    avg({{ value }} order by {{ order_by }})
{%- endmacro %}

{% macro sorted_text_list(value, delimiter) -%}
    {{ return(adapter.dispatch('sorted_text_list', 'cluster_reliability')(value, delimiter)) }}
{%- endmacro %}

{% macro default__sorted_text_list(value, delimiter) -%}
    {{ dbt.listagg(value, delimiter, "order by " ~ value) }}
{%- endmacro %}

{% macro sorted_number_list(value) -%}
    {{ return(adapter.dispatch('sorted_number_list', 'cluster_reliability')(value)) }}
{%- endmacro %}

{% macro default__sorted_number_list(value) -%}
    list({{ value }} order by {{ value }}) filter (where {{ value }} is not null)
{%- endmacro %}

{% macro spark__sorted_number_list(value) -%}
    array_sort(collect_list({{ value }}))
{%- endmacro %}

{% macro last_value_ignoring_nulls(value) -%}
    {{ return(adapter.dispatch('last_value_ignoring_nulls', 'cluster_reliability')(value)) }}
{%- endmacro %}

{% macro default__last_value_ignoring_nulls(value) -%}
    last_value({{ value }} ignore nulls)
{%- endmacro %}

{% macro year_month(timestamp) -%}
    {{ return(adapter.dispatch('year_month', 'cluster_reliability')(timestamp)) }}
{%- endmacro %}

{% macro default__year_month(timestamp) -%}
    strftime({{ timestamp }}, '%Y-%m')
{%- endmacro %}

{% macro materialized_cte() -%}
    {{ return(adapter.dispatch('materialized_cte', 'cluster_reliability')()) }}
{%- endmacro %}

{% macro default__materialized_cte() -%}
    materialized
{%- endmacro %}

{#- ---- Spark (dbt-spark): the same figures as DuckDB's forms above. Timestamps are Spark's
    TIMESTAMP_NTZ (naive UTC, as landed; the session's spark.sql.timestampType). -#}

{% macro spark__value_at_max(value, order_by) -%}
    max_by({{ value }}, {{ order_by }})
{%- endmacro %}

{% macro spark__regex_contains(text, pattern) -%}
    ({{ text }} rlike {{ pattern }})
{%- endmacro %}

{% macro spark__day_spine(first_day, end, alias) -%}
    lateral explode(sequence(
        cast({{ first_day }} as timestamp_ntz), {{ dbt.dateadd('day', -1, end) }}, interval 1 day
    )) as {{ alias }} (day_start)
{%- endmacro %}

{% macro spark__node_set(node) -%}
    collect_list({{ node }})
{%- endmacro %}

{% macro spark__node_sets_overlap(left, right) -%}
    arrays_overlap({{ left }}, {{ right }})
{%- endmacro %}

{#- percentile: exact, interpolated between the two middle values, as quantile_cont -#}
{% macro spark__median(value) -%}
    percentile({{ value }}, 0.5)
{%- endmacro %}

{#- Spark has no ordered aggregates: the values sorted by `order_by`, then summed in that order. -#}
{% macro spark__ordered_mean(value, order_by) -%}
    aggregate(
        array_sort(collect_list(case when {{ value }} is not null then struct({{ order_by }} as k, cast({{ value }} as double) as v) end)),
        cast(0 as double),
        (total, x) -> total + x.v
    ) / count({{ value }})
{%- endmacro %}

{% macro spark__sorted_text_list(value, delimiter) -%}
    array_join(array_sort(collect_list({{ value }})), {{ delimiter }})
{%- endmacro %}

{#- dbt's cross-database date macros, in DuckDB's sense: a difference counts the boundaries crossed
    (dbt-spark's own forms go through dates and Unix time and lose TIMESTAMP_NTZ). -#}
{% macro spark__dateadd(datepart, interval, from_date_or_timestamp) -%}
    timestampadd({{ datepart }}, {{ interval }}, {{ from_date_or_timestamp }})
{%- endmacro %}

{% macro spark__datediff(first_date, second_date, datepart) -%}
    {%- if datepart == 'month' -%}
        ((year({{ second_date }}) * 12 + month({{ second_date }})) - (year({{ first_date }}) * 12 + month({{ first_date }})))
    {%- elif datepart == 'day' -%}
        datediff(cast({{ second_date }} as date), cast({{ first_date }} as date))
    {%- elif datepart == 'second' -%}
        (unix_seconds(cast({{ second_date }} as timestamp)) - unix_seconds(cast({{ first_date }} as timestamp)))
    {%- else -%}
        {{ exceptions.raise_compiler_error("datediff by " ~ datepart ~ " has no Spark form here") }}
    {%- endif -%}
{%- endmacro %}

{% macro spark__date_trunc(datepart, date) -%}
    cast(date_trunc('{{ datepart }}', {{ date }}) as timestamp_ntz)
{%- endmacro %}

{% macro spark__last_value_ignoring_nulls(value) -%}
    last_value({{ value }}, true)
{%- endmacro %}

{% macro spark__year_month(timestamp) -%}
    date_format({{ timestamp }}, 'yyyy-MM')
{%- endmacro %}

{% macro spark__materialized_cte() -%}
{%- endmacro %}
