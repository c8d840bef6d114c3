{#- GPU-hours an interrupted attempt lost, the paper's estimate summed over the rows:
    min(runtime, lost_work_cap_minutes) x GPUs (docs/methodology.md "Lost goodput"). -#}
{% macro lost_work_gpu_hours(runtime_seconds='runtime_seconds', gpus='gpus') -%}
    coalesce(sum(
        least({{ runtime_seconds }}, {{ run_parameter('lost_work_cap_minutes') }} * 60) * {{ gpus }}
    ), 0) / 3600
{%- endmacro %}
