{% macro gpu_size_buckets() -%}
    (
        select *
        from {{ ref('job_size_buckets') }}
        -- bucket 0 holds exactly the attempts that are not GPU attempts (size_gpus = 0,
        -- int_attempts_month_scoped.is_gpu_attempt): no GPU figure lists it
        where max_gpus > 0
    )
{%- endmacro %}
