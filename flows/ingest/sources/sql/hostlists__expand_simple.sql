-- Temp table host_list_members(list_id, node) of the simple lists of at most max_nodes nodes.
-- Slurm prints each node of a list once, so members are not deduplicated.
create or replace temp table host_list_members as
with parts as (
    select
        list_id,
        unnest(regexp_extract_all(node_list, {{ param("part") }})) as part
    from host_lists
    where simple and size <= {{ param("max_nodes") }}
),

ranges as (
    select
        list_id,
        r.prefix,
        unnest(string_split(r.ranges, ',')) as item
    from (
        select
            list_id,
            regexp_extract(part, {{ param("simple_part") }}, ['prefix', 'ranges']) as r
        from parts
        where contains(part, '[')
    )
),

numbers as (
    select
        list_id,
        prefix,
        split_part(item, '-', 1) as low,
        cast(unnest(generate_series(
            cast(split_part(item, '-', 1) as bigint),
            cast(coalesce(nullif(split_part(item, '-', 2), ''), split_part(item, '-', 1)) as bigint)
        )) as varchar) as number
    from ranges
)

select
    list_id,
    part as node
from parts
where not contains(part, '[')
union all
-- zero padding follows the low bound: gpu[008-010] gives gpu008 .. gpu010
select
    list_id,
    prefix || lpad(number, cast(greatest(length(number), length(low)) as integer), '0') as node
from numbers
