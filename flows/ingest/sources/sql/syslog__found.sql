-- (source_line, node, ts, the groups of the message match, rest) of the lines of syslog_read that
-- are read, in line order; ts in UTC: a time without an offset by the clock (template variable
-- to_utc, an expression over local_ts), one with an offset by it.
select
    source_line,
    node,
    case
        when zone = '' then {{ to_utc }}
        else local_ts - to_seconds(if(
            zone = 'Z',
            0,
            if(left(zone, 1) = '-', -1, 1) * (cast(substr(zone, 2, 2) as bigint) * 3600 + cast(right(zone, 2) as bigint) * 60)
        ))
    end as ts
    {% for name in groups %}, m['{{ name }}'] as {{ name }}{% endfor %}
    {% if message %}, rest{% endif %}
from syslog_read
where node is not null and local_ts is not null and node_ok
order by source_line
