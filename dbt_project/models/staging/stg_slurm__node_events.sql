with source as (

    select * from {{ source('landed', 'node_events') }}

),

renamed as (

    select
        landed_month as month,
        cluster,
        node,
        started_at as event_at,
        ended_at,
        state as node_state,
        reason,
        user_name,
        source_file,
        source_line

    from source

)

select * from renamed
