-- Temp table host_lists(list_id, node_list, simple, size) of the distinct lists of {{ source }};
-- size counted from the ranges of the simple lists (NULL for the others: hostlists.py's scanner
-- checks, sizes and expands them). A list longer than max_chars is no list (the scanner refuses it):
-- no pattern looks at it.
create or replace temp table host_lists as
select
    list_id,
    node_list,
    simple,
    case when simple then size end as size
from (
    select
        row_number() over () as list_id,
        node_list,
        -- simple when the parts cover the whole list and each is plain or one ascending bracket
        -- (a number too long for BIGINT is not: the scanner sizes it; the comparison is false, never
        -- NULL, as list_bool_and passes over a NULL and would call the list simple)
        coalesce(
            array_to_string(parts, ',') = node_list
            and list_bool_and(list_transform(
                parts,
                lambda p: regexp_matches(p, {{ param("plain_part") }})
                or (
                    regexp_matches(p, {{ param("simple_part") }})
                    and list_bool_and(list_transform(
                        string_split(regexp_extract(p, {{ param("simple_part") }}, 2), ','),
                        lambda r: coalesce(
                            try_cast(split_part(r, '-', 1) as bigint)
                            <= try_cast(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1)) as bigint),
                            false
                        )
                    ))
                )
            )),
            false
        ) as simple,
        list_sum(list_transform(
            parts,
            lambda p: case
                when not contains(p, '[') then 1
                else list_sum(list_transform(
                    string_split(regexp_extract(p, {{ param("simple_part") }}, 2), ','),
                    lambda r: try_cast(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1)) as bigint)
                    - try_cast(split_part(r, '-', 1) as bigint) + 1
                ))
            end
        )) as size
    from (
        select
            node_list,
            case
                when length(node_list) <= {{ param("max_chars") }} then regexp_extract_all(node_list, {{ param("part") }})
            end as parts
        from (
            select distinct node_list from {{ source }}
            -- what Slurm prints for no nodes
            where node_list is not null and node_list not in ('', 'None assigned', '(null)')
        )
    )
)
