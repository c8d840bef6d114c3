-- Each attempt's rows (fct_attempts: one per month the attempt touches) as a period of several
-- months counts them (docs/methodology.md "A study's range"): each attempt once, with its final
-- row in the period. An attempt open at a month's end has a row in each later month built that it
-- touches too; a period ending at month L sees it as its last row up to L: ended there, or still
-- open at the period's end. So each row appears once per later-or-same row of its attempt
-- (`final`), the row of `final` valid for the periods whose last month is in
-- [final_month, final_until) (macro period_rows, as_final): exposure is the row's own (clipped to
-- its month: summing it over the months is right), the outcome, size and GPU flag are the final
-- row's, and only the final row itself counts the attempt (is_final). A month's period (L = the
-- month) sees each row as itself. The one rule of how a range counts attempts and jobs.
-- Incremental by job (DuckDB; Spark rebuilds it whole): a build replaces the rows of every job with
-- an attempt in its months (macro range_replaced_jobs), all months' rows of them, as a month built
-- late adds pairs to the months before it and moves their final_until and job_until; no other row
-- can change, and the table's cost stays a month's, however many months are built.

{{ config(
    materialized='incremental' if target.type == 'duckdb' else 'table',
    partition_by=none,
    unique_key=['cluster', 'job_id_raw'],
    replaced_keys='range_replaced_jobs',
) }}

with attempts as (

    select
        month,
        attempt_id,
        cluster,
        job_id_raw,
        submit_at,
        outcome,
        is_open,
        is_infra_failure,
        is_gpu_attempt,
        size_bucket,
        bucket_order,
        runtime_seconds,
        gpu_seconds,
        gpu_node_seconds,
        lead(month) over (partition by attempt_id order by month) as next_month
    from {{ ref('fct_attempts') }}
    {%- if is_incremental() %} as attempts
    -- the jobs this build replaces, every month's rows of them (the table replaced_keys: see macro range_replaced_jobs)
    where exists (
        select 1 from replaced_keys
        where replaced_keys.cluster = attempts.cluster and replaced_keys.job_id_raw = attempts.job_id_raw
    )
    {%- endif %}

),

-- a job (cluster, job id) of GPU attempts stands in each month as its last-submitted GPU attempt
job_months as (

    select
        month,
        attempt_id,
        cluster,
        job_id_raw
    from (
        select
            month,
            attempt_id,
            cluster,
            job_id_raw,
            row_number() over (
                partition by month, cluster, job_id_raw order by submit_at desc, attempt_id desc
            ) as rank_in_month
        from attempts
        where is_gpu_attempt
    ) as ranked
    where rank_in_month = 1

),

-- ... and counts in a period at its last month there: before the next month built holding it
job_rows as (

    select
        month,
        attempt_id,
        coalesce(
            lead(month) over (partition by cluster, job_id_raw order by month), '9999-12'
        ) as job_until
    from job_months

)

select
    own.month,
    own.attempt_id,
    own.cluster,
    own.job_id_raw,
    final.month as final_month,
    final.next_month as final_until,
    final.month = own.month as is_final,
    final.outcome,
    final.is_open,
    final.is_infra_failure,
    final.is_gpu_attempt,
    final.size_bucket,
    final.bucket_order,
    own.runtime_seconds,
    own.gpu_seconds,
    own.gpu_node_seconds,
    -- the GPU job counts in a period whose last month is before job_until (null: not its row)
    case when final.month = own.month then job_rows.job_until end as job_until
from attempts as own
inner join attempts as final on final.attempt_id = own.attempt_id and final.month >= own.month
left join job_rows on job_rows.month = own.month and job_rows.attempt_id = own.attempt_id
