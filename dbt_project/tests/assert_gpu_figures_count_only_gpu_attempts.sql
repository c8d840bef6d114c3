-- The GPU figures of the month being built count GPU attempts only (int_attempts_month_scoped.is_gpu_attempt,
-- docs/methodology.md "GPU attempts"): no mart of a GPU figure has bucket 0 (the CPU-only
-- attempts'), no breakdown row lacks both GPU-hours and an infrastructure failure, the month's
-- attempts are its GPU and CPU-only attempts, and r_f's node-days are the GPU attempts'.
with sized as (

    select
        'fct_mttf_by_size_monthly' as mart,
        size_bucket
    from {{ ref('fct_mttf_by_size_monthly') }}
    where month in {{ run_months() }}
    union all
    select
        'fct_job_mix_monthly' as mart,
        size_bucket
    from {{ ref('fct_job_mix_monthly') }}
    where month in {{ run_months() }}
    union all
    select
        'fct_job_runs' as mart,
        size_bucket
    from {{ ref('fct_job_runs') }}
    where month in {{ run_months() }}
    union all
    select
        'fct_ettr_by_size_ended_monthly' as mart,
        size_bucket
    from {{ ref('fct_ettr_by_size_ended_monthly') }}
    where month in {{ run_months() }}
    union all
    select
        'fct_failures' as mart,
        size_bucket
    from {{ ref('fct_failures') }}
    where month in {{ run_months() }}

),

problems as (

    select
        mart,
        'a row of bucket 0 (CPU-only attempts)' as problem
    from sized
    where size_bucket = '0'
    union all
    select
        'fct_breakdowns_monthly' as mart,
        'a row with no GPU-hours and no infrastructure failure' as problem
    from {{ ref('fct_breakdowns_monthly') }}
    where month in {{ run_months() }} and gpu_hours = 0 and infra_failures = 0
    union all
    select
        'fct_month_totals' as mart,
        'gpu_attempts + cpu_only_attempts is not attempts' as problem
    from {{ ref('fct_month_totals') }}
    where month in {{ run_months() }} and gpu_attempts + cpu_only_attempts <> attempts
    union all
    select
        'fct_node_failure_rate_monthly' as mart,
        'all_node_days is not fct_month_totals.gpu_node_days' as problem
    from {{ ref('fct_node_failure_rate_monthly') }} as rates
    inner join {{ ref('fct_month_totals') }} as totals on totals.month = rates.month
    where rates.month in {{ run_months() }} and abs(rates.all_node_days - totals.gpu_node_days) > 1e-9

)

select * from problems
