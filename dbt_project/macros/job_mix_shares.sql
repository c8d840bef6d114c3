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
        from {{ period_rows('(' ~ range_sums(by, gpu_only=true) ~ ')', as_final=true) }}
        group by periods.period_id{% for column in by %}, facts.{{ column }}{% endfor %}
    ) as summed
{%- endmacro %}
