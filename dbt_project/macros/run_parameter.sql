{% macro run_parameter(name) -%}
    (select {{ name }} from {{ source('run', 'parameters') }})
{%- endmacro %}

{% macro run_months() -%}
    (select month from {{ source('run', 'months') }})
{%- endmacro %}

{% macro for_each_run_month() -%}
    {#- the caller's single-month query once per month of run.months, its rows unioned; the caller
        gets the month as a scalar subquery (with a plain literal, DuckDB 2.0 returned no row of
        fct_breakdowns_monthly's query while counting 7) -#}
    {#- the table itself, not source(): a unit test of the model reads the months being built too -#}
    {%- set table = env_var('DBT_RUN_SCHEMA', 'run') ~ '.months' -%}
    {#- read when the model is built (a compile without a build, e.g. the SQL linter's, sees one month) -#}
    {%- set building = execute and flags.WHICH in ('build', 'run') -%}
    {%- set months = run_query('select month from ' ~ table ~ ' order by month').columns[0].values() if building else ['0000-00'] -%}
    {%- for month in months %}
    select * from ({{ caller("(select '" ~ month ~ "')") }}) as month_{{ loop.index }}
    {{ 'union all' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro run_months_with_cluster() -%}
    {#- each month of this build (run.months: its bounds, as_of, period_end) with the run's cluster -#}
    select
        months.*,
        run_parameters.cluster
    from {{ source('run', 'months') }} as months
    cross join {{ source('run', 'parameters') }} as run_parameters
{%- endmacro %}
