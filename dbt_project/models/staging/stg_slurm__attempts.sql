with source as (

    select * from {{ source('landed', 'attempts') }}

),

renamed as (

    select
        landed_month as month,
        {{ attempt_id() }} as attempt_id,
        cluster,
        job_id,
        job_id_raw,
        job_name,
        user_name,
        account,
        partition,
        qos,
        state as slurm_state,
        cancelled_by_uid,
        exit_code,
        exit_signal,
        submit_at,
        eligible_at,
        start_at,
        end_at,
        elapsed_seconds,
        n_nodes,
        node_list,
        gpus,
        req_gpus,
        reason,
        failed_node,
        restarts,
        sluid,
        admin_comment,
        source_file,
        source_line

    from source

)

select * from renamed
