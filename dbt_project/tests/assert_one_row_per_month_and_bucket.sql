-- fct_mttf_by_size_monthly has exactly one row per (month, size_bucket).
select month, size_bucket, count(*) as n
from {{ ref('fct_mttf_by_size_monthly') }}
group by month, size_bucket
having count(*) > 1
