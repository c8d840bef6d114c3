-- Temp table node_count_repairs(source_line, size): NNodes 0 beside a host list (seen in Open
-- XDMoD's sample, tests/data/xdmod): the list's size is the count, a repair the reader counts.
create or replace temp table node_count_repairs as
select
    s.source_line,
    l.size
from attempts_staged as s
inner join host_lists as l on s.node_list = l.node_list
where
    s.n_nodes = 0 and l.size > 0
    and s.source_line not in (select p.source_line from attempt_problems as p)
