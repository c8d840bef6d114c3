-- One row per job run that ended in a month of the build (run.months), with its whole history: a run still going at a
-- month's end is counted in the month it ends, its earlier months' parts added (docs/methodology.md
-- "ETTR as the paper measured it"). A month's part of a run continues in the next month under the
-- job it was running at the month's end (fct_job_runs.last_job_id_raw, is_open), so the history is
-- walked back one month at a time over the months built so far. Also: whether the run is among the
-- highest-priority runs (ettr_priority_qos / ettr_priority_partition; by default the QOS of the
-- month's largest job runs).

with recursive

-- the parts of runs still going at an earlier month's end: the only rows a history reaches back to
open_parts as (

    select
        month,
        cluster,
        first_job_id_raw,
        last_job_id_raw,
        gpus,
        runtime_seconds,
        queue_seconds,
        interruptions,
        lost_seconds,
        productive_seconds
    from {{ ref('fct_job_runs') }}
    where is_open

),

buckets as (

    select * from {{ ref('job_size_buckets') }}

),

parameters as (

    select * from {{ source('run', 'parameters') }}

),

this_month as (

    select * from {{ ref('fct_job_runs') }}
    where month in {{ run_months() }}

),

-- the jobs running at each month's end
open_jobs as (

    select distinct
        month,
        cluster,
        last_job_id_raw
    from open_parts

),

-- the runs that ended in the month, and whether the run began before it: its first job was
-- running at the previous month's end
ended as (

    select
        this_month.*,
        previous_part.last_job_id_raw is not null as continues_earlier_part
    from this_month
    left join open_jobs as previous_part
        on
            previous_part.cluster = this_month.cluster
            and previous_part.last_job_id_raw = this_month.first_job_id_raw
            and {{ dbt.datediff("cast(previous_part.month || '-01' as date)", "cast(this_month.month || '-01' as date)", 'month') }}
            = 1
    where not this_month.is_open

),

-- each run that began before the month, then its part in each earlier month, newest first (the
-- others, most runs, are whole in the month: walking them would cost a pass over every run)
history as (

    select
        month as ended_month,
        job_run_id as history_run_id,
        0 as months_back,
        month,
        cluster,
        first_job_id_raw,
        gpus,
        runtime_seconds,
        queue_seconds,
        interruptions,
        lost_seconds,
        productive_seconds
    from ended
    where continues_earlier_part

    union all

    select
        history.ended_month,
        history.history_run_id,
        history.months_back + 1 as months_back,
        earlier.month,
        earlier.cluster,
        earlier.first_job_id_raw,
        earlier.gpus,
        earlier.runtime_seconds,
        earlier.queue_seconds,
        earlier.interruptions,
        earlier.lost_seconds,
        earlier.productive_seconds
    from history
    inner join open_parts as earlier
        on
            earlier.cluster = history.cluster
            and earlier.last_job_id_raw = history.first_job_id_raw
            and {{ dbt.datediff("cast(earlier.month || '-01' as date)", "cast(history.month || '-01' as date)", 'month') }}
            = 1

),

whole as (

    select
        ended_month,
        history_run_id,
        min(month) as first_month,
        count(*) as months,
        {{ value_at_max('first_job_id_raw', 'months_back') }} as origin_job_id_raw,
        max(gpus) as gpus,
        sum(runtime_seconds) as runtime_seconds,
        sum(queue_seconds) as queue_seconds,
        sum(interruptions) as interruptions,
        sum(lost_seconds) as lost_seconds,
        sum(productive_seconds) as productive_seconds
    from history
    group by ended_month, history_run_id

    union all

    select
        month as ended_month,
        job_run_id as history_run_id,
        month as first_month,
        1 as months,
        first_job_id_raw as origin_job_id_raw,
        gpus,
        runtime_seconds,
        queue_seconds,
        interruptions,
        lost_seconds,
        productive_seconds
    from ended
    where not continues_earlier_part

),

-- the default highest priority: the QOS of each month's largest job runs (the most common among
-- them, then the first by name)
largest_gpus as (

    select
        month,
        max(gpus) as gpus
    from this_month
    group by month

),

largest_qos_counts as (

    select
        this_month.month,
        this_month.qos,
        row_number() over (partition by this_month.month order by count(*) desc, this_month.qos) as qos_rank
    from this_month
    inner join largest_gpus
        on largest_gpus.month = this_month.month and largest_gpus.gpus = this_month.gpus
    where this_month.qos is not null
    group by this_month.month, this_month.qos

),

priority as (

    select
        months.month,
        case
            when parameters.ettr_priority_qos <> '' then parameters.ettr_priority_qos
            when parameters.ettr_priority_partition = '' then largest_qos.qos
        end as priority_qos,
        nullif(parameters.ettr_priority_partition, '') as priority_partition
    from {{ source('run', 'months') }} as months
    cross join parameters
    left join largest_qos_counts as largest_qos
        on largest_qos.month = months.month and largest_qos.qos_rank = 1

)

select
    ended.month,
    ended.job_run_id,
    ended.cluster,
    ended.first_job_id_raw,
    whole.origin_job_id_raw,
    ended.user_name,
    ended.account,
    ended.job_name,
    ended.qos,
    ended.partition,
    ended.final_outcome,
    whole.first_month,
    whole.months,
    whole.gpus,
    buckets.size_bucket,
    buckets.bucket_order,
    whole.runtime_seconds,
    whole.queue_seconds,
    whole.interruptions,
    whole.lost_seconds,
    whole.productive_seconds,
    {{ ettr('whole.productive_seconds', 'whole.runtime_seconds', 'whole.queue_seconds') }} as ettr,
    -- the runs the ETTR tables take: long enough over their whole history, with time to measure
    whole.runtime_seconds >= parameters.ettr_min_run_hours * 3600
    and whole.runtime_seconds + whole.queue_seconds > 0 as is_ettr_run,
    -- without a QOS or partition to select on (records without QOS), no run is
    coalesce(
        (priority.priority_qos is not null or priority.priority_partition is not null)
        and (priority.priority_qos is null or ended.qos = priority.priority_qos)
        and (priority.priority_partition is null or ended.partition = priority.priority_partition),
        false
    ) as is_priority_run,
    priority.priority_qos,
    priority.priority_partition
from ended
inner join whole on whole.ended_month = ended.month and whole.history_run_id = ended.job_run_id
inner join buckets on whole.gpus between buckets.min_gpus and buckets.max_gpus
cross join parameters
inner join priority on priority.month = ended.month
