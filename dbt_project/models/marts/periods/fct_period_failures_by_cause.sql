-- Each period's (dim_periods) infrastructure failures by cause, each counted in the month its
-- attempt ended, summed over the period's months built: counts (by the Slurm state the attempt ended
-- in), each cause's share of the period's failures, and its rate per 1000 GPU node-days of every GPU
-- attempt (fct_period_node_failure_rate.all_node_days) and per million GPU-hours
-- (fct_period_totals), macro failure_rates. The same split into the period's last month and its
-- earlier months, with their node-days (the report tests a trailing window's last month against them).

with by_month as (

    select
        month,
        cause_category,
        count(*) as failures,
        cast(sum(case when gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end) as bigint) as failures_paper_jobs,
        cast(sum(case when slurm_state = 'NODE_FAIL' then 1 else 0 end) as bigint) as node_fail,
        cast(sum(case when slurm_state = 'FAILED' then 1 else 0 end) as bigint) as failed,
        cast(sum(case when slurm_state = 'REQUEUED' then 1 else 0 end) as bigint) as requeued
    from {{ ref('fct_failures') }}
    group by month, cause_category

),

by_cause as (

    select
        periods.period_id,
        facts.cause_category,
        cast(sum(facts.failures) as bigint) as failures,
        cast(sum(facts.failures_paper_jobs) as bigint) as failures_paper_jobs,
        cast(sum(facts.node_fail) as bigint) as node_fail,
        cast(sum(facts.failed) as bigint) as failed,
        cast(sum(facts.requeued) as bigint) as requeued,
        cast(sum(case when periods.is_last_month then facts.failures else 0 end) as bigint) as last_month_failures,
        cast(sum(case when periods.is_last_month then 0 else facts.failures end) as bigint) as earlier_failures
    from {{ period_rows('by_month') }}
    group by periods.period_id, facts.cause_category

)

select
    by_cause.period_id,
    by_cause.cause_category,
    categories.failure_domain,
    by_cause.failures,
    by_cause.failures_paper_jobs,
    by_cause.node_fail,
    by_cause.failed,
    by_cause.requeued,
    {{ share('by_cause.failures', 'sum(by_cause.failures) over (partition by by_cause.period_id)') }} as share_of_failures,
    rates.all_node_days as node_days,
    {{ failure_rates('by_cause.failures', 'rates.all_node_days', 'totals.gpu_hours') }},
    by_cause.last_month_failures,
    rates.last_month_node_days,
    by_cause.earlier_failures,
    rates.earlier_node_days
from by_cause
inner join {{ ref('failure_categories') }} as categories on categories.category = by_cause.cause_category
inner join {{ ref('fct_period_node_failure_rate') }} as rates on rates.period_id = by_cause.period_id
inner join {{ ref('fct_period_totals') }} as totals on totals.period_id = by_cause.period_id
