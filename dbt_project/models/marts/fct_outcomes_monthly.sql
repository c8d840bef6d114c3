-- The month's attempts and GPU-hours by outcome, each with its share of the month's attempts
-- and GPU-hours (the job mix of the report, macro job_mix_shares; fct_job_mix_monthly splits them
-- by size too).

{{ job_mix_shares('month in ' ~ run_months(), ['month', 'outcome']) }}
