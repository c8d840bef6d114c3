-- Each GPU node's time out per period (docs/methodology.md "Node repair time and availability"):
-- its outages that began in the period, its node-hours out inside the period's observed time
-- (fct_node_outages: once per node where its events overlap) and its longest time out in one
-- outage with that outage's cause. The report lists the nodes out longest.

with periods as (

    select * from {{ ref('dim_periods') }}

),

outages as (

    select
        periods.period_id,
        outages.node,
        outages.began_in_month,
        outages.out_seconds,
        outages.category,
        row_number() over (
            partition by periods.period_id, outages.node
            order by outages.out_seconds desc, outages.out_at, outages.event_id
        ) as length_rank
    from periods
    inner join {{ ref('fct_node_outages') }} as outages
        on outages.month between periods.first_month and periods.last_month
    inner join {{ ref('dim_nodes') }} as nodes on nodes.node = outages.node
    where nodes.is_gpu_node

)

select
    period_id,
    node,
    cast(sum(case when began_in_month then 1 else 0 end) as bigint) as outages,
    cast(sum(out_seconds) as bigint) / 3600e0 as out_node_hours,
    max(out_seconds) / 3600e0 as longest_outage_hours,
    max(case when length_rank = 1 then category end) as longest_outage_category
from outages
group by period_id, node
