-- The month's rows counted at each layer, for the data-quality suite layer_row_counts (nothing
-- lost between layers): landed = staged job records, month-scoped attempts = the month's mart
-- rows, and the infrastructure failures the same in every mart.

select
    {{ run_parameter('month') }} as month,
    (select count(*) from {{ source('landed', 'attempts') }}) as landed_attempts,
    (select count(*) from {{ ref('stg_slurm__attempts') }}) as staged_attempts,
    (select count(*) from {{ ref('int_attempts_month_scoped') }}) as scoped_attempts,
    (
        select count(*) from {{ ref('fct_attempts') }}
        where month = {{ run_parameter('month') }}
    ) as mart_attempts,
    (
        select count(*) from {{ ref('fct_attempts') }}
        where month = {{ run_parameter('month') }} and is_infra_failure
    ) as failed_attempts,
    (
        select count(*) from {{ ref('fct_failures') }}
        where month = {{ run_parameter('month') }}
    ) as mart_failures,
    (
        select coalesce(sum(failures), 0) from {{ ref('fct_failures_by_cause_monthly') }}
        where month = {{ run_parameter('month') }}
    ) as failures_by_cause
