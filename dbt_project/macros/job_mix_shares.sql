{% macro job_mix_shares(where, by) -%}
    select
        {%- for column in by %}
        {{ column }},
        {%- endfor %}
        attempts,
        -- from whole GPU-seconds: exact in any order, whichever engine sums them
        gpu_seconds / 3600e0 as gpu_hours,
        {%- set over = '(partition by month)' if 'month' in by else '()' %}
        {{ share('attempts', 'sum(attempts) over ' ~ over) }} as attempt_share,
        {{ share('gpu_seconds', 'sum(gpu_seconds) over ' ~ over) }} as gpu_hours_share
    from (
        select
            {%- for column in by %}
            {{ column }},
            {%- endfor %}
            cast(sum(attempts) as bigint) as attempts,
            cast(sum(gpu_seconds) as bigint) as gpu_seconds
        from {{ ref('fct_job_mix_monthly') }}
        where {{ where }}
        group by {{ by | join(', ') }}
    ) as summed
{%- endmacro %}
