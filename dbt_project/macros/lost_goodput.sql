{% macro lost_work_gpu_seconds(runtime_seconds='runtime_seconds', gpus='gpus') -%}
    coalesce(sum(
        least({{ runtime_seconds }}, {{ run_parameter('lost_work_cap_minutes') }} * 60) * {{ gpus }}
    ), 0)
{%- endmacro %}

{% macro lost_gpu_hours(first_order_gpu_seconds, second_order_gpu_seconds) -%}
    {{ first_order_gpu_seconds }} / 3600 as first_order_gpu_hours,
    {{ second_order_gpu_seconds }} / 3600 as second_order_gpu_hours,
    {{ first_order_gpu_seconds }} / 3600 + {{ second_order_gpu_seconds }} / 3600 as lost_gpu_hours
{%- endmacro %}

{% macro lost_work() -%}
    select
        month,
        size_bucket,
        runtime_seconds,
        gpus,
        true as is_first_order
    from {{ ref('fct_attempts') }}
    where is_infra_failure and is_gpu_attempt
    union all
    -- a preemption's row has no bucket: its attempt's row of the same month has
    select
        preemptions.month,
        attempts.size_bucket,
        preemptions.runtime_seconds,
        preemptions.gpus,
        false as is_first_order
    from {{ ref('fct_second_order_preemptions') }} as preemptions
    left join {{ ref('fct_attempts') }} as attempts
        on attempts.attempt_id = preemptions.attempt_id and attempts.month = preemptions.month
{%- endmacro %}

{% macro lost_goodput(lost_work, by) -%}
    select
        {%- for column in by %}
        {{ column }},
        {%- endfor %}
        infra_failures,
        second_order_preemptions,
        first_order_gpu_seconds,
        second_order_gpu_seconds,
        {{ lost_gpu_hours('first_order_gpu_seconds', 'second_order_gpu_seconds') }}
    from (
        select
            {%- for column in by %}
            lost_work.{{ column }},
            {%- endfor %}
            cast(coalesce(sum(case when lost_work.is_first_order then 1 else 0 end), 0) as bigint) as infra_failures,
            {{ lost_work_gpu_seconds('lost_work.runtime_seconds', 'case when lost_work.is_first_order then lost_work.gpus else 0 end') }}
                as first_order_gpu_seconds,
            cast(coalesce(sum(case when lost_work.is_first_order then 0 else 1 end), 0) as bigint)
                as second_order_preemptions,
            {{ lost_work_gpu_seconds('lost_work.runtime_seconds', 'case when lost_work.is_first_order then 0 else lost_work.gpus end') }}
                as second_order_gpu_seconds
        from {{ lost_work }} as lost_work
        group by {% for column in by %}lost_work.{{ column }}{{ ', ' if not loop.last }}{% endfor %}
    ) as lost
{%- endmacro %}
