-- A refused list has no members.
delete from host_list_members
where list_id in (
    select l.list_id from host_lists as l
    inner join refused_host_lists as r on l.node_list = r.node_list
)
