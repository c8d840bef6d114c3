-- The study's infrastructure failures by cause (each counted in the month its attempt ended),
-- summed from the monthly mart over the range, and each cause's rate over the range's exposure:
-- per 1000 GPU node-days of every GPU attempt (fct_node_failure_rate_monthly.all_node_days, the
-- monthly mart's node_days) and per million GPU-hours, both the range's totals (fct_study_totals).

with by_cause as (

    select
        cause_category,
        failure_domain,
        cast(sum(failures) as bigint) as failures
    from {{ ref('fct_failures_by_cause_monthly') }}
    where {{ in_study() }}
    group by cause_category, failure_domain

)

select
    by_cause.cause_category,
    by_cause.failure_domain,
    by_cause.failures,
    totals.all_node_days as node_days,
    {{ failure_rates('by_cause.failures', 'totals.all_node_days', 'totals.gpu_hours') }}
from by_cause
cross join {{ ref('fct_study_totals') }} as totals
