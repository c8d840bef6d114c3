-- Each GPU node's time out per period (dim_periods; docs/methodology.md "Node repair time and
-- availability"): its outages that began in the period, its node-hours out inside the period's
-- observed time (fct_node_outages) and its longest time out in one outage with that outage's cause.
-- The report lists the nodes out longest.

with outages as (

    {{ gpu_node_outages() }}

),

ranked as (

    select
        periods.period_id,
        facts.node,
        facts.began_in_month,
        facts.out_seconds,
        facts.category,
        row_number() over (
            partition by periods.period_id, facts.node
            order by facts.out_seconds desc, facts.out_at asc, facts.event_id asc
        ) as length_rank
    from {{ period_rows('outages') }}

)

select
    period_id,
    node,
    -- the outages begun in the period (one begun before it counts only its time out)
    cast(count(case when began_in_month then node end) as bigint) as outages,
    cast(sum(out_seconds) as bigint) / 3600e0 as out_node_hours,
    max(out_seconds) / 3600e0 as longest_outage_hours,
    max(case when length_rank = 1 then category end) as longest_outage_category
from ranked
group by period_id, node
