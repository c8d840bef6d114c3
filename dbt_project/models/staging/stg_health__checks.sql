with source as (

    select * from {{ source('landed', 'health_checks') }}

),

renamed as (

    select
        landed_month as month,
        cluster,
        node,
        ts as event_at,
        source,
        check_name,
        status,
        message,
        source_file,
        source_line

    from source

)

select * from renamed
