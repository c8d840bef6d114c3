{% macro ettr_run_sets(runs) -%}
    select
        'all' as run_set,
        {{ runs }}.*
    from {{ runs }}
    union all
    select
        'priority' as run_set,
        {{ runs }}.*
    from {{ runs }}
    where {{ runs }}.is_priority_run
{%- endmacro %}

{% macro ettr_stddev_from_means() -%}
    case
        when runs > 1
            then sqrt(greatest(runs / (runs - 1e0) * (mean_ettr_squared - mean_ettr * mean_ettr), 0))
    end
{%- endmacro %}

{% macro ettr_by_size(runs) -%}
    select
        period_id,
        run_set,
        size_bucket,
        bucket_order,
        min_gpus,
        max_gpus,
        priority_qos,
        priority_partition,
        runs,
        runs_from_earlier_months,
        mean_gpus,
        mean_ettr,
        {{ ettr_stddev_from_means() }} as stddev_ettr,
        median_ettr,
        min_ettr
    from (
        -- the ordered means first, the spread from them after: one value of each mean, whichever
        -- engine (Spark evaluated the means inside one expression of aggregates to a different last bit)
        select
            sets.period_id,
            sets.run_set,
            sets.size_bucket,
            sets.bucket_order,
            buckets.min_gpus,
            buckets.max_gpus,
            min(sets.priority_qos) as priority_qos,
            min(sets.priority_partition) as priority_partition,
            count(*) as runs,
            count(*) filter (where sets.months > 1) as runs_from_earlier_months,
            {{ ordered_mean('sets.gpus', job_run_order('sets')) }} as mean_gpus,
            {{ ordered_mean('sets.ettr', job_run_order('sets')) }} as mean_ettr,
            {{ ordered_mean('sets.ettr * sets.ettr', job_run_order('sets')) }} as mean_ettr_squared,
            {{ median('sets.ettr') }} as median_ettr,
            min(sets.ettr) as min_ettr
        from ({{ ettr_run_sets(runs) }}) as sets
        inner join {{ ref('job_size_buckets') }} as buckets on buckets.size_bucket = sets.size_bucket
        group by sets.period_id, sets.run_set, sets.size_bucket, sets.bucket_order, buckets.min_gpus, buckets.max_gpus
    ) as means
{%- endmacro %}

{% macro job_run_order(relation) -%}
    {{ dbt.concat([relation ~ '.month', "'|'", relation ~ '.job_run_id']) }}
{%- endmacro %}

{% macro ettr(productive_seconds, runtime_seconds, queue_seconds) -%}
    {{ share(productive_seconds, runtime_seconds ~ ' + ' ~ queue_seconds) }}
{%- endmacro %}
