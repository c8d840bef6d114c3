-- A table, unlike the other staging models: three models join it (and the lemon analysis), and
-- as a view each of them hashed and expanded every attempt again.
{{ config(materialized='table', database=('scratch' if target.type == 'duckdb' else none)) }}

with attempts as (

    select
        landed_month as month,
        {{ attempt_id() }} as attempt_id,
        cluster,
        node_list
    from {{ source('landed', 'attempts') }}

),

host_lists as (

    select * from {{ source('landed', 'host_lists') }}

),

host_list_members as (

    select * from {{ source('landed', 'host_list_members') }}

),

-- The landing keeps each host list's nodes once; every attempt gets them back here (a list's
-- number means something within its month's landing only).
expanded as (

    select
        attempts.month,
        attempts.attempt_id,
        attempts.cluster,
        host_list_members.node

    from attempts
    inner join host_lists
        on host_lists.landed_month = attempts.month and host_lists.node_list = attempts.node_list
    inner join host_list_members
        on host_list_members.landed_month = host_lists.landed_month and host_list_members.list_id = host_lists.list_id

)

select * from expanded
