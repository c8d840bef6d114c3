-- ETTR of the long job runs that ended in the month, each with its whole history
-- (fct_job_run_histories.is_ettr_run), by size bucket (macro ettr_by_size): for every run
-- (run_set 'all') and for the highest-priority runs ('priority'), the paper's comparison with
-- E[ETTR] (its Fig. 9). The mean's spread (stddev_ettr) gives its interval; mean_gpus the size
-- E[ETTR] is taken at.

{% call(month) for_each_run_month() %}
with runs as (

    select * from {{ ref('fct_job_run_histories') }}
    where month = {{ month }} and is_ettr_run

),

by_size as (

    {{ ettr_by_size('runs') }}

)

select
    {{ month }} as month,
    by_size.*
from by_size
{% endcall %}
