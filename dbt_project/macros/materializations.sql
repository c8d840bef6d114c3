{#- DuckDB's table, view and incremental materializations, each one statement in one transaction.

    dbt-duckdb's own build a model under a temporary name, swap it in with renames and drop the old
    one, and (incremental) write the new rows to a temporary table, describe both tables and copy
    the rows across: seven to nine queries per model, each ~10 ms of dbt's Python whatever the
    rows, and (incremental) every row of the month written twice. Here a table or view is created
    or replaced in place and a mart's months are deleted and inserted straight from the model's
    query. Atomic all the same: DuckDB's DDL is transactional, and dbt commits once per model.

    What the skipped steps were for cannot happen in this project: its tables have no indexes,
    foreign keys or grants, and a warehouse whose marts' columns differ from the models' (another
    version of the project) is rebuilt whole before any build (flows/warehouse/schema_version.py),
    so there are no columns to sync (`on_schema_change`, which Spark's warehouse, recording no
    version, still follows). Spark keeps dbt-spark's materializations. -#}

{#- A table or a view (`relation_type`) created or replaced in place by the model's query. -#}
{% macro replace_in_place(relation_type) %}
    {%- set target_relation = this.incorporate(type=relation_type) -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- if existing_relation is not none and existing_relation.type != relation_type %}
        {%- do adapter.drop_relation(existing_relation) %}
    {%- endif %}
    {% call statement('main') -%}
        create or replace {{ relation_type }} {{ target_relation }} as ({{ compiled_code }})
    {%- endcall %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do adapter.commit() %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{% endmacro %}

{% materialization table, adapter='duckdb' %}
    {{ return(replace_in_place('table')) }}
{% endmaterialization %}

{% materialization view, adapter='duckdb' %}
    {{ return(replace_in_place('view')) }}
{% endmaterialization %}

{#- A mart incremental by month (dbt_project.yml: `unique_key: month`, strategy delete+insert): the
    rows of the months of the build (run.months) deleted, and the model's rows, which are those
    months', inserted; on the first build (or --full-refresh) the table is created from them.
    A model may replace rows by other keys: `unique_key` its columns and `replaced_keys` the name of
    a macro selecting the keys this build replaces (from the table's rows before the build too). Its
    rows are kept in a temporary table `replaced_keys`, read by the model's query, before the
    rows with those keys are deleted. -#}
{% materialization incremental, adapter='duckdb' %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set unique_key = config.require('unique_key') -%}
    {%- if config.get('incremental_strategy') != 'delete+insert' -%}
        {%- do exceptions.raise_compiler_error(model.name ~ ': this project replaces months (delete+insert) on DuckDB') -%}
    {%- endif -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {% call statement('main') -%}
        {%- if existing_relation is none or not existing_relation.is_table or should_full_refresh() %}
            {%- if existing_relation is not none and not existing_relation.is_table %}
                drop view {{ existing_relation }};
            {%- endif %}
            create or replace table {{ target_relation }} as ({{ compiled_code }})
        {%- else %}
            {%- set replaced_keys = config.get('replaced_keys') %}
            {%- if replaced_keys %}
            {%- set keys = [unique_key] if unique_key is string else unique_key %}
            create or replace temp table replaced_keys as ({{ context[replaced_keys]() }});
            delete from {{ target_relation }} as replaced using replaced_keys
            where {% for key in keys %}{{ 'and ' if not loop.first }}replaced.{{ key }} = replaced_keys.{{ key }} {% endfor %};
            {%- else %}
            delete from {{ target_relation }}
            where {{ unique_key }} in (select month from {{ env_var('DBT_RUN_SCHEMA', 'run') }}.months);
            {%- endif %}
            insert into {{ target_relation }} by name ({{ compiled_code }})
        {%- endif %}
    {%- endcall %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do adapter.commit() %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
