with source as (

    select * from {{ source('landed', 'xid_events') }}

),

renamed as (

    select
        landed_month as month,
        cluster,
        node,
        ts as event_at,
        xid,
        pci as pci_bus,
        message,
        source_file,
        source_line

    from source

)

select * from renamed
