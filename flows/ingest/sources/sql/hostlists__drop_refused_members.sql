-- A refused list has no members.
delete from host_list_members
where list_id in (
    select list_id from host_lists
    inner join refused_host_lists using (node_list)
)
