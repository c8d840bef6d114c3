-- The month's job records counted in the layers before the marts (landed, staging, month-scoped),
-- as built. The data-quality suite layer_row_counts compares them with the marts' rows as they are
-- when it runs: nothing may be lost between layers.

{% call(month) for_each_run_month() %}
select
    {{ month }} as month,
    (select count(*) from {{ source('landed', 'attempts') }} where landed_month = {{ month }}) as landed_attempts,
    (select count(*) from {{ ref('stg_slurm__attempts') }} where month = {{ month }}) as staged_attempts,
    (select count(*) from {{ ref('int_attempts_month_scoped') }} where month = {{ month }}) as scoped_attempts
{% endcall %}
