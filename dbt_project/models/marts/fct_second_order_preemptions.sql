-- The paper's second-order cost of failures: attempts PREEMPTED to make room for a job that an
-- infrastructure failure had interrupted. Slurm does not record who preempted whom, so this is an
-- estimate: a preemption counts when the attempt ended at most 5 minutes before the start of such
-- a restarting attempt (a later attempt of a job run with an earlier infrastructure failure) and
-- the two share a node. GPU attempts only (is_gpu_attempt), restarts and preempted alike.

with attempts as (

    select * from {{ ref('fct_attempts') }}
    where month in {{ run_months() }} and is_gpu_attempt

),

attempt_nodes as (

    select * from {{ ref('stg_slurm__attempt_nodes') }}

),

-- each run's first infrastructure failure: a restart is a later start of the same run (one pass
-- over the month's failures, not a probe of every attempt's run)
failed_runs as (

    select
        month,
        job_run_id,
        min(end_at) as first_failure_end_at
    from attempts
    where is_infra_failure
    group by month, job_run_id

),

restarts as (

    select
        restart.month,
        restart.attempt_id,
        restart.job_run_id,
        restart.start_at,
        restart.gpus
    from attempts as restart
    inner join failed_runs
        on
            failed_runs.month = restart.month
            and failed_runs.job_run_id = restart.job_run_id
            and failed_runs.first_failure_end_at <= restart.start_at

),

preempted as (

    select * from attempts
    where outcome = 'preempted' and end_at is not null

),

-- Each restart under the hour of its start and of 5 minutes before it: the preemptions are then
-- found by an equality join on the hour (a join on the time range alone was planned as a merge
-- join over every preemption, 5 times slower on a 1.5M-attempt month).
restart_hours as (

    select
        month,
        attempt_id,
        job_run_id,
        start_at,
        {{ dbt.date_trunc('hour', 'start_at') }} as hour_start
    from restarts
    union
    select
        month,
        attempt_id,
        job_run_id,
        start_at,
        {{ dbt.date_trunc('hour', dbt.dateadd('minute', -5, 'start_at')) }} as hour_start
    from restarts

),

in_window as (

    select
        preempted.month,
        preempted.attempt_id,
        restart_hours.attempt_id as restart_attempt_id,
        restart_hours.job_run_id as restart_job_run_id,
        restart_hours.start_at as restart_start_at
    from preempted
    inner join restart_hours
        on
            restart_hours.month = preempted.month
            and {{ dbt.date_trunc('hour', 'preempted.end_at') }} = restart_hours.hour_start
            and preempted.end_at >= {{ dbt.dateadd('minute', -5, 'restart_hours.start_at') }}
            and preempted.end_at <= restart_hours.start_at

),

-- node lists of just these attempts, compared as lists: joining node rows to node rows lets the
-- planner pair every attempt on a node with every other one first (tens of GB on a 1.5M-attempt
-- month). The list type and its overlap test are engine-specific: macros/portable.sql.
paired as (

    select
        month,
        attempt_id
    from in_window
    union
    select
        month,
        restart_attempt_id as attempt_id
    from in_window

),

node_lists as (

    select
        attempt_nodes.month,
        attempt_nodes.attempt_id,
        {{ node_set('attempt_nodes.node') }} as nodes
    from attempt_nodes
    inner join paired
        on paired.month = attempt_nodes.month and paired.attempt_id = attempt_nodes.attempt_id
    group by attempt_nodes.month, attempt_nodes.attempt_id

),

sharing_a_node as (

    select
        in_window.month,
        in_window.attempt_id,
        in_window.restart_attempt_id
    from in_window
    inner join node_lists as victim
        on victim.month = in_window.month and victim.attempt_id = in_window.attempt_id
    inner join node_lists as restart
        on restart.month = in_window.month and restart.attempt_id = in_window.restart_attempt_id
    where {{ node_sets_overlap('victim.nodes', 'restart.nodes') }}

),

pairs as (

    select
        in_window.*,
        row_number() over (
            partition by
                in_window.month, in_window.attempt_id order by
                in_window.restart_start_at,
                in_window.restart_attempt_id
        ) as pair_rank
    from in_window
    inner join sharing_a_node
        on
            sharing_a_node.month = in_window.month
            and sharing_a_node.attempt_id = in_window.attempt_id
            and sharing_a_node.restart_attempt_id = in_window.restart_attempt_id

)

select
    preempted.attempt_id,
    preempted.month,
    preempted.job_id_raw,
    preempted.submit_at,
    preempted.end_at as preempted_at,
    preempted.gpus,
    preempted.runtime_seconds,
    pairs.restart_attempt_id,
    pairs.restart_job_run_id,
    pairs.restart_start_at
from pairs
inner join preempted on preempted.month = pairs.month and preempted.attempt_id = pairs.attempt_id
where pairs.pair_rank = 1
