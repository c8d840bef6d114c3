{% macro job_mix_shares(by) -%}
    select
        period_id,
        {%- for column in by %}
        {{ column }},
        {%- endfor %}
        attempts,
        -- from whole GPU-seconds: exact in any order, whichever engine sums them
        gpu_seconds / 3600e0 as gpu_hours,
        {{ share('attempts', 'sum(attempts) over (partition by period_id)') }} as attempt_share,
        {{ share('gpu_seconds', 'sum(gpu_seconds) over (partition by period_id)') }} as gpu_hours_share
    from (
        select
            periods.period_id,
            {%- for column in by %}
            facts.{{ column }},
            {%- endfor %}
            cast(sum(facts.attempts) as bigint) as attempts,
            cast(sum(facts.gpu_seconds) as bigint) as gpu_seconds
        from {{ period_rows('(' ~ job_mix_by_month(by) ~ ')', as_final=true) }}
        group by periods.period_id{% for column in by %}, facts.{{ column }}{% endfor %}
    ) as summed
{%- endmacro %}

{% macro job_mix_by_month(by) -%}
    select
        month,
        final_month,
        final_until,
        {%- for column in by %}
        {{ column }},
        {%- endfor %}
        cast(sum(case when is_final then 1 else 0 end) as bigint) as attempts,
        cast(sum(gpu_seconds) as bigint) as gpu_seconds
    from {{ ref('fct_range_attempts') }}
    where is_gpu_attempt
    group by month, final_month, final_until{% for column in by %}, {{ column }}{% endfor %}
{%- endmacro %}
