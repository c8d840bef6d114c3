-- The scanner's expansion of the lists that are not simple joins the members.
insert into host_list_members
select * from complex_host_list_members
