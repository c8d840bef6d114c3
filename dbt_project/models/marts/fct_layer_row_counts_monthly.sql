-- The month's job records counted in the layers before the marts (landed, staging, month-scoped),
-- as built. The data-quality suite layer_row_counts compares them with the marts' rows as they are
-- when it runs: nothing may be lost between layers.

select
    {{ run_parameter('month') }} as month,
    (select count(*) from {{ source('landed', 'attempts') }}) as landed_attempts,
    (select count(*) from {{ ref('stg_slurm__attempts') }}) as staged_attempts,
    (select count(*) from {{ ref('int_attempts_month_scoped') }}) as scoped_attempts
