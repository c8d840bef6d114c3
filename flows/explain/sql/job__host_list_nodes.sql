-- The nodes of each host list asked, from a month's landing ({{ host_lists }} and
-- {{ host_list_members }}: the landing keeps each list's nodes once).
select
    lists.node_list,
    members.node
from {{ host_lists }} as lists
inner join {{ host_list_members }} as members on lists.list_id = members.list_id
where lists.node_list in (select unnest({{ param("lists") }}::varchar[]))
order by members.node
