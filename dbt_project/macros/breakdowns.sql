{% macro breakdown_key(column) -%}
    coalesce(nullif({{ column }}, ''), '(none)')
{%- endmacro %}

{% macro by_breakdown_key(relation, columns) -%}
    {%- for dimension in ['account', 'partition'] %}
    select
        '{{ dimension }}' as dimension,
        {{ breakdown_key(relation ~ '.' ~ dimension) }} as key,
        {%- for column in columns %}
        {{ relation }}.{{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ relation }}
    {{ 'union all' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro breakdowns(attempt_figures, runs) -%}
    select
        attempt_figures.period_id,
        attempt_figures.dimension,
        attempt_figures.key,
        row_number() over (
            partition by attempt_figures.period_id, attempt_figures.dimension
            order by attempt_figures.lost_gpu_hours desc, attempt_figures.infra_failures desc, attempt_figures.key asc
        ) as rank,
        attempt_figures.infra_failures,
        attempt_figures.lost_gpu_hours,
        attempt_figures.gpu_hours,
        cast(coalesce(run_figures.ettr_runs, 0) as bigint) as ettr_runs,
        run_figures.mean_ettr
    from {{ attempt_figures }} as attempt_figures
    left join (
        select
            keyed_runs.period_id,
            keyed_runs.dimension,
            keyed_runs.key,
            count(*) as ettr_runs,
            {{ ordered_mean('keyed_runs.ettr', job_run_order('keyed_runs')) }} as mean_ettr
        from ({{ by_breakdown_key(runs, ['period_id', 'month', 'job_run_id', 'ettr']) }}) as keyed_runs
        group by keyed_runs.period_id, keyed_runs.dimension, keyed_runs.key
    ) as run_figures
        on
            run_figures.period_id = attempt_figures.period_id
            and run_figures.dimension = attempt_figures.dimension
            and run_figures.key = attempt_figures.key
{%- endmacro %}
