-- An infra failure always has a cause category, and only infra failures have one (the month being built).
select attempt_id, outcome, cause_category
from {{ ref('fct_attempts') }}
where
    month in {{ run_months() }}
    and (
        (is_infra_failure and cause_category is null)
        or (not is_infra_failure and cause_category is not null)
    )
