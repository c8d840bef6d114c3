-- Node repair times and the fleet's availability per period (dim_periods; docs/methodology.md "Node
-- repair time and availability"), over the GPU nodes (dim_nodes.is_gpu_node, the fleet's one rule):
-- per cause (`grain` cause), for the failures (every cause the taxonomy calls critical: grain
-- failures) and for every outage (grain all). Repairs are the outages that began in the period and
-- ended by its dump (fct_node_outages): their mean and median hours and their sorted hours (the
-- exact interval of the median: flows/figures/repair.py); still out, those that had not ended. Time
-- out is inside the period's observed time; availability = 1 - time out / the fleet's node-hours
-- (fct_period_node_failure_rate's: the GPU nodes seen in each month, for its observed time).

with outages as (

    {{ gpu_node_outages() }}

),

in_period as (

    select
        periods.period_id,
        facts.category,
        facts.failure_domain,
        facts.severity,
        facts.began_in_month,
        facts.repair_seconds,
        facts.out_seconds
    from {{ period_rows('outages') }}

),

grains as (

    select
        period_id,
        'cause' as grain,
        category,
        failure_domain,
        severity,
        began_in_month,
        repair_seconds,
        out_seconds
    from in_period
    union all
    select
        period_id,
        'failures' as grain,
        null as category,
        null as failure_domain,
        'critical' as severity,
        began_in_month,
        repair_seconds,
        out_seconds
    from in_period
    where severity = 'critical'
    union all
    select
        period_id,
        'all' as grain,
        null as category,
        null as failure_domain,
        null as severity,
        began_in_month,
        repair_seconds,
        out_seconds
    from in_period

),

summed as (

    select
        period_id,
        grain,
        category,
        failure_domain,
        severity,
        cast(sum(case when began_in_month then 1 else 0 end) as bigint) as outages,
        cast(sum(case when began_in_month and repair_seconds is not null then 1 else 0 end) as bigint) as repairs,
        cast(sum(case when began_in_month and repair_seconds is null then 1 else 0 end) as bigint) as still_out,
        -- from exact integer sums, the same in any order (a float sum is not): the mean and spread
        cast(sum(case when began_in_month then repair_seconds end) as bigint) as repair_seconds_sum,
        cast(sum(case when began_in_month then repair_seconds * repair_seconds end) as bigint) as repair_seconds_squares,
        {{ median('case when began_in_month then repair_seconds end') }} / 3600e0 as median_repair_hours,
        {{ sorted_number_list('case when began_in_month then repair_seconds / 3600e0 end') }} as repair_hours,
        cast(sum(out_seconds) as bigint) as out_node_seconds
    from grains
    group by period_id, grain, category, failure_domain, severity

)

select
    periods.period_id,
    coalesce(summed.grain, 'all') as grain,
    summed.category,
    summed.failure_domain,
    summed.severity,
    coalesce(summed.outages, 0) as outages,
    coalesce(summed.repairs, 0) as repairs,
    coalesce(summed.still_out, 0) as still_out,
    summed.repair_seconds_sum / 3600e0 / nullif(summed.repairs, 0) as mean_repair_hours,
    -- sample standard deviation: (sum of squares - sum^2 / n) / (n - 1), from the exact sums
    case
        when summed.repairs > 1
            then
                sqrt(greatest(
                    (summed.repair_seconds_squares - summed.repair_seconds_sum * (summed.repair_seconds_sum / cast(summed.repairs as double)))
                    / (summed.repairs - 1),
                    0
                )) / 3600e0
    end as stddev_repair_hours,
    summed.median_repair_hours,
    summed.repair_hours,
    coalesce(summed.out_node_seconds, 0) / 3600e0 as out_node_hours,
    rates.fleet_node_days * 24 as fleet_node_hours,
    case
        when coalesce(summed.grain, 'all') = 'all' and rates.fleet_node_days > 0
            then 1 - coalesce(summed.out_node_seconds, 0) / (rates.fleet_node_days * 86400e0)
    end as availability
from {{ ref('dim_periods') }} as periods
inner join {{ ref('fct_period_node_failure_rate') }} as rates on rates.period_id = periods.period_id
left join summed on summed.period_id = periods.period_id
