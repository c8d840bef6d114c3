-- The study's job mix: attempts and GPU-hours per outcome and size bucket, summed from the
-- monthly job mix over the range, and each row's share of the range's attempts and GPU-hours
-- (macro job_mix_shares). An attempt across a month end counts in each month it touches (open in
-- the earlier ones), as in fct_study_totals.

{{ job_mix_shares(in_study(), ['outcome', 'size_bucket', 'bucket_order']) }}
