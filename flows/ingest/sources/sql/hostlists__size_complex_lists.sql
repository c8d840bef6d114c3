-- A list the scanner expanded is as long as its members.
update host_lists set size = c.size
from (
    select
        list_id,
        count(*) as size
    from complex_host_list_members
    group by list_id
) as c
where host_lists.list_id = c.list_id
