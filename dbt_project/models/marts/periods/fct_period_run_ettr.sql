-- ETTR of each period's (dim_periods) long job runs as each month cut them (fct_job_runs.is_ettr_run:
-- a run's part within one month), by size bucket.

select
    periods.period_id,
    facts.size_bucket,
    facts.bucket_order,
    count(*) as runs,
    {{ ordered_mean('facts.ettr', job_run_order('facts')) }} as mean_ettr,
    {{ median('facts.ettr') }} as median_ettr,
    min(facts.ettr) as min_ettr
from {{ period_rows(ref('fct_job_runs')) }}
where facts.is_ettr_run
group by periods.period_id, facts.size_bucket, facts.bucket_order
