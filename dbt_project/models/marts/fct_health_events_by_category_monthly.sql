-- The month's health events by taxonomy category, severity and source (fct_month_totals has
-- their total and the unclassified share).

select
    month,
    category,
    severity,
    source,
    count(*) as events
from {{ ref('fct_health_events') }}
where month in {{ run_months() }}
group by month, category, severity, source
