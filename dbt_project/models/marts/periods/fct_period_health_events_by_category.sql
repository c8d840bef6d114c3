-- Each period's (dim_periods) node health events by taxonomy category, severity and source, summed
-- over its months built (fct_period_totals has their total and the unclassified share).

with by_month as (

    select
        month,
        category,
        severity,
        source,
        count(*) as events
    from {{ ref('fct_health_events') }}
    group by month, category, severity, source

)

select
    periods.period_id,
    facts.category,
    facts.severity,
    facts.source,
    cast(sum(facts.events) as bigint) as events
from {{ period_rows('by_month') }}
group by periods.period_id, facts.category, facts.severity, facts.source
