-- One row per period (dim_periods) and month built within it: the months each period's figures are
-- summed over (macro period_rows).

{{ config(materialized='table', partition_by=none, unique_key=none, tags=['periods']) }}

select
    periods.period_id,
    periods.kind,
    periods.first_month,
    periods.last_month,
    periods.window_months,
    built.month,
    built.month = periods.last_month as is_last_month
from {{ ref('dim_periods') }} as periods
inner join {{ ref('fct_months_built') }} as built
    on built.month between periods.first_month and periods.last_month
