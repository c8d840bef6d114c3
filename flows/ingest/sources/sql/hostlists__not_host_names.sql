-- The lists that name a node that is not a host name, and the first such node.
select
    l.node_list,
    format({{ param("not_a_host_name") }}, any_value(m.node)) as reason
from host_list_members as m
inner join host_lists as l on m.list_id = l.list_id
where not regexp_full_match(m.node, {{ param("node_name") }})
group by l.node_list
