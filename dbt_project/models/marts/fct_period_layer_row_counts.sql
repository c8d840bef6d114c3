-- Each month built, as its period (dim_periods' `month:<month>`): its job records counted in the
-- layers before the marts (landed, staging, month-scoped), as built. The data-quality suite
-- layer_row_counts compares them with the marts' rows as they are when it runs: nothing may be
-- lost between layers. Built with the month (the layers hold the months being built), not with
-- the periods' marts: a trailing window or a study has no layers of its own.

{% call(month) for_each_run_month() %}
select
    {{ dbt.concat(["'month:'", month]) }} as period_id,
    {{ month }} as month,
    (select count(*) from {{ source('landed', 'attempts') }} where landed_month = {{ month }}) as landed_attempts,
    (select count(*) from {{ ref('stg_slurm__attempts') }} where month = {{ month }}) as staged_attempts,
    (select count(*) from {{ ref('int_attempts_month_scoped') }} where month = {{ month }}) as scoped_attempts
{% endcall %}
