-- Each period's (dim_periods) job mix: attempts and GPU-hours per outcome and size bucket, summed
-- over its months built, and each row's share of the period's attempts and GPU-hours (macro
-- job_mix_shares). GPU attempts only (is_gpu_attempt; fct_period_totals counts the CPU-only ones).
-- An attempt across a month end counts in each month it touches (open in the earlier ones).

{{ job_mix_shares(['outcome', 'size_bucket', 'bucket_order']) }}
