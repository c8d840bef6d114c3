-- Each period's (dim_periods) attempts and GPU-hours by outcome, each with its share of the
-- period's attempts and GPU-hours (the job mix of the report, macro job_mix_shares;
-- fct_period_job_mix splits them by size too).

{{ job_mix_shares(['outcome']) }}
