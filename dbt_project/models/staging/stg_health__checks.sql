with source as (

    select * from {{ source('landed', 'health_checks') }}

),

renamed as (

    select
        landed_month as month,
        cluster,
        node,
        ts as event_at,
        -- it happened in (event_at - this, event_at]: a scraped series' step; 0 for a log line's own time
        -- (and in a month landed before the column was)
        coalesce(ts_uncertainty_seconds, 0) as event_uncertainty_seconds,
        source,
        check_name,
        status,
        message,
        source_file,
        source_line

    from source

)

select * from renamed
