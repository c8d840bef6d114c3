-- ETTR of each period's (dim_periods) long job runs that ended in its months built, each with its
-- whole history (fct_job_run_histories.is_ettr_run; a run begun before the period brings its
-- earlier months), by size bucket (macro ettr_by_size): for every run (run_set 'all') and for the
-- highest-priority runs ('priority', as each run's month selected them), the paper's comparison with
-- E[ETTR] (its Fig. 9). The mean's spread (stddev_ettr) gives its interval; mean_gpus the size
-- E[ETTR] is taken at.

with runs as (

    select
        periods.period_id,
        facts.*
    from {{ period_rows(ref('fct_job_run_histories')) }}
    where facts.is_ettr_run

),

by_size as (

    {{ ettr_by_size('runs') }}

)

select * from by_size
