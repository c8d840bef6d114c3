-- fct_mttf_by_size_monthly has exactly one row per size bucket in the month being built.
select month, size_bucket, count(*) as n
from {{ ref('fct_mttf_by_size_monthly') }}
where month in {{ run_months() }}
group by month, size_bucket
having count(*) > 1
