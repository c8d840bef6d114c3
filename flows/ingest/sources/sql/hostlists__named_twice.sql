-- The lists that name a node twice (the scanner refuses the lists that are not simple that do).
select
    l.node_list,
    format('names node {} twice', any_value(m.node)) as reason
from (
    select
        list_id,
        node
    from host_list_members
    group by list_id, node
    having count(*) > 1
) as m
inner join host_lists as l on m.list_id = l.list_id
group by l.node_list
