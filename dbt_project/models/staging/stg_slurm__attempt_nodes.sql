with source as (

    select * from {{ source('landed', 'attempt_nodes') }}

),

renamed as (

    select
        {{ dbt.hash(dbt.concat(["cluster", "'|'", "job_id_raw", "'|'", "cast(submit_at as varchar)"])) }} as attempt_id,
        cluster,
        node

    from source

)

select * from renamed
