-- The month's health events by taxonomy category, severity and source (fct_month_totals has
-- their total and the unclassified share).

select
    {{ run_parameter('month') }} as month,
    category,
    severity,
    source,
    count(*) as events
from {{ ref('int_health_events_classified') }}
where
    event_at >= {{ run_parameter('month_start') }}
    and event_at < {{ run_parameter('month_end') }}
group by category, severity, source
