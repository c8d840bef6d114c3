-- (source_line, field, value, reason) of each line of syslog_read that is not read: a line is read
-- when it has a node (a valid name, node_ok) and a time.
select
    source_line,
    case when node is not null and not node_ok then 'host' else 'timestamp' end as field,
    case
        when node is null then left(undated_line, 40)
        when not node_ok then node
        when dated is not null then dated.stamp || dated.fraction || dated.zone
        else bsd.month || ' ' || bsd.day || ' ' || split_part(bsd.clock, '.', 1)
    end as value,
    case
        when node is null then {{ param("no_prefix") }}
        when not tagged then {{ param("not_tagged") }}
        when not node_ok then {{ param("node_name_rule") }}
        else 'not a valid date and time'
    end as reason
from syslog_read
where node is null or local_ts is null or not node_ok
order by source_line
