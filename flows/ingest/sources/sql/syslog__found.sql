-- (source_line, node, ts, the groups of the message match, rest) of the lines of syslog_dated that
-- are read (no problem), in line order; ts naive UTC.
select
    source_line,
    node,
    ts
    {% for name in groups %}, m['{{ name }}'] as {{ name }}{% endfor %}
    {% if message %}, rest{% endif %}
from syslog_dated
where problem is null
order by source_line
