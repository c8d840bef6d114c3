-- (source_line, field, value, reason) of each line of syslog_dated that is not read (its problem).
select
    source_line,
    problem.field,
    case
        when node is null then left(undated_line, 40)
        when not node_ok then node
        when problem.field = 'timestamp' and dated is not null then dated.stamp || dated.fraction || dated.zone
        when problem.field = 'timestamp' then bsd.month || ' ' || bsd.day || ' ' || split_part(bsd.clock, '.', 1)
        {% if message %}else left(rest, 200){% endif %}
    end as value,
    problem.reason
from syslog_dated
where problem is not null
order by source_line
