-- One row per period the figures are computed over (docs/architecture.md "Periods"): each month
-- built (fct_months_built), each trailing window (run.trailing_windows) ending at each month built,
-- and the range of a study's build (run.parameters study_from..study_to; a build of months has
-- none). A period holds the months built from first_month to last_month
-- (dim_period_months); every figure's mart (models/marts/periods) has one set of rows per period.

{{ config(materialized='table', partition_by=none, unique_key=none, tags=['periods']) }}

with built as (

    select
        month,
        month_start
    from {{ ref('fct_months_built') }}

),

periods as (

    select
        {{ dbt.concat(["'month:'", 'month']) }} as period_id,
        'month' as kind,
        month as first_month,
        month as last_month,
        cast(null as integer) as window_months
    from built
    union all
    select
        {{ dbt.concat(["'trailing:'", 'cast(windows.window_months as ' ~ dbt.type_string() ~ ')', "':'", 'built.month']) }}
            as period_id,
        'trailing' as kind,
        {{ year_month(dbt.dateadd('month', '1 - windows.window_months', 'built.month_start')) }} as first_month,
        built.month as last_month,
        windows.window_months
    from built
    cross join {{ source('run', 'trailing_windows') }} as windows
    union all
    select
        {{ dbt.concat(["'study:'", 'study_from', "':'", 'study_to']) }} as period_id,
        'study' as kind,
        study_from as first_month,
        study_to as last_month,
        cast(null as integer) as window_months
    from {{ source('run', 'parameters') }}
    where study_from <> ''  -- a study's build (a build of months adds no study period)

)

select * from periods
