-- The GPU figures count GPU attempts only (int_attempts_month_scoped.is_gpu_attempt,
-- docs/methodology.md "GPU attempts"): no mart of a GPU figure has bucket 0 (the CPU-only
-- attempts'), no breakdown row lacks both GPU-hours and an infrastructure failure, a period's
-- attempts are its GPU and CPU-only attempts, and r_f's node-days are the GPU attempts'.
with sized as (

    select
        'fct_period_mttf_by_size' as mart,
        size_bucket
    from {{ ref('fct_period_mttf_by_size') }}
    union all
    select
        'fct_period_job_mix' as mart,
        size_bucket
    from {{ ref('fct_period_job_mix') }}
    union all
    select
        'fct_job_runs' as mart,
        size_bucket
    from {{ ref('fct_job_runs') }}
    where month = {{ run_parameter('month') }}
    union all
    select
        'fct_period_ettr_by_size' as mart,
        size_bucket
    from {{ ref('fct_period_ettr_by_size') }}
    union all
    select
        'fct_failures' as mart,
        size_bucket
    from {{ ref('fct_failures') }}
    where month = {{ run_parameter('month') }}

),

problems as (

    select
        mart,
        'a row of bucket 0 (CPU-only attempts)' as problem
    from sized
    where size_bucket = '0'
    union all
    select
        'fct_period_breakdowns' as mart,
        'a row with no GPU-hours and no infrastructure failure' as problem
    from {{ ref('fct_period_breakdowns') }}
    where gpu_hours = 0 and infra_failures = 0
    union all
    select
        'fct_period_totals' as mart,
        'gpu_attempts + cpu_only_attempts is not attempts' as problem
    from {{ ref('fct_period_totals') }}
    where gpu_attempts + cpu_only_attempts <> attempts
    union all
    select
        'fct_period_node_failure_rate' as mart,
        'all_node_days is not fct_period_totals.gpu_node_days' as problem
    from {{ ref('fct_period_node_failure_rate') }} as rates
    inner join {{ ref('fct_period_totals') }} as totals on totals.period_id = rates.period_id
    where abs(rates.all_node_days - totals.gpu_node_days) > 1e-9

)

select * from problems
