{% macro period_rows(relation, alias='facts', as_final=false) -%}
    {{ ref('dim_period_months') }} as periods
    inner join {{ relation }} as {{ alias }} on {{ alias }}.month = periods.month
    {%- if as_final %}
        and {{ alias }}.final_month <= periods.last_month
        and ({{ alias }}.final_until is null or {{ alias }}.final_until > periods.last_month)
    {%- endif %}
{%- endmacro %}

{% macro range_replaced_jobs() -%}
    select
        cluster,
        job_id_raw
    from {{ ref('fct_attempts') }}
    where month in {{ run_months() }}
    union
    select
        cluster,
        job_id_raw
    from {{ this }}
    where month in {{ run_months() }}
{%- endmacro %}

{% macro range_sums(by, gpu_only=false) -%}
    select
        month,
        final_month,
        final_until,
        {%- for column in by %}
        {{ column }},
        {%- endfor %}
        count(*) as pairs,
        cast(sum(case when is_final then 1 else 0 end) as bigint) as attempts,
        cast(sum(case when is_final and is_gpu_attempt then 1 else 0 end) as bigint) as gpu_attempts,
        cast(sum(case when is_final and not is_open then 1 else 0 end) as bigint) as ended_attempts,
        cast(sum(case when is_final and is_open then 1 else 0 end) as bigint) as open_attempts,
        cast(sum(case when is_final and is_infra_failure and is_gpu_attempt then 1 else 0 end) as bigint)
            as infra_failures,
        cast(sum(case when is_final and outcome = 'unknown' then 1 else 0 end) as bigint) as unknown_states,
        cast(sum(runtime_seconds) as bigint) as runtime_seconds,
        cast(sum(gpu_seconds) as bigint) as gpu_seconds,
        -- gpu_node_seconds is 0 for a CPU-only attempt: fct_period_node_failure_rate's all_node_days
        cast(sum(gpu_node_seconds) as bigint) as gpu_node_seconds
    from {{ ref('fct_range_attempts') }}
    {%- if gpu_only %}
    where is_gpu_attempt
    {%- endif %}
    group by month, final_month, final_until{% for column in by %}, {{ column }}{% endfor %}
{%- endmacro %}
