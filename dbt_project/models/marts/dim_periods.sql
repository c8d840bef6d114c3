-- STUB for the repair branch (the periods helper's dim_periods replaces it at merge).
with built as (
    select distinct month, month_start from {{ ref('fct_node_failure_rate_monthly') }}
),
windows as (
    select window_months from {{ source('run', 'trailing_windows') }}
)
select 'month:' || month as period_id, 'month' as kind, month as first_month, month as last_month,
    cast(null as integer) as window_months
from built
union all
select 'trailing:' || cast(windows.window_months as varchar) || ':' || built.month, 'trailing',
    strftime({{ dbt.dateadd('month', '1 - windows.window_months', 'built.month_start') }}, '%Y-%m'), built.month, windows.window_months
from built cross join windows
union all
select 'study:' || study_from || ':' || study_to, 'study', study_from, study_to, null
from {{ source('run', 'parameters') }}
