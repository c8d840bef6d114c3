-- Each period's (dim_periods) job mix: attempts and GPU-hours per outcome and size bucket over its
-- months built, and each row's share of the period's attempts and GPU-hours (macro
-- job_mix_shares). GPU attempts only (is_gpu_attempt; fct_period_totals counts the CPU-only ones).
-- An attempt across a month end is open in the earlier month's period; a range counts it once,
-- with its final outcome and all its GPU-hours in the range (fct_range_attempts).

{{ job_mix_shares(['outcome', 'size_bucket', 'bucket_order']) }}
