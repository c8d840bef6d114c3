-- The month's classified health events, kept month after month: the signals of a trailing window
-- (e.g. the lemon nodes') read every month it spans. Only events inside the month being built are
-- kept, so an event a log repeats across a month end is counted in its own month only.

with events as (

    select classified.* from {{ ref('int_health_events_classified') }} as classified
    inner join {{ source('run', 'months') }} as months
        on
            months.month = classified.month
            and classified.event_at >= months.month_start
            and classified.event_at < months.month_end

)

select
    events.event_id,
    events.month,
    events.cluster,
    events.node,
    events.event_at,
    events.source,
    events.check_name,
    events.code,
    events.category,
    events.severity,
    events.failure_domain,
    events.cause_priority,
    events.matched_rule
from events
