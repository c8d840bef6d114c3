-- The lists that name more nodes no other list names than the rest of the month's fleet holds
-- (and more than uncorroborated_nodes: a small dump may hold one large job).
with named as (
    select
        node,
        count(*) as lists
    from host_list_members
    group by node
),

fleet as (
    select count(*) as nodes from named
),

alone as (
    select
        m.list_id,
        count(*) as nodes
    from host_list_members as m
    inner join named on m.node = named.node
    where named.lists = 1
    group by m.list_id
)

select
    l.node_list,
    format(
        'names {:,} nodes that no other record names, more than the {:,} other nodes of the month''s fleet',
        alone.nodes,
        fleet.nodes - alone.nodes
    ) as reason
from alone
inner join host_lists as l on alone.list_id = l.list_id
cross join fleet
where alone.nodes > {{ param("uncorroborated_nodes") }} and alone.nodes > fleet.nodes - alone.nodes
