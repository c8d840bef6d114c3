-- Temp table syslog_read: each line of syslog_lines with its node and its local time (and its zone,
-- when the stamp has one). ISO stamps (nearly every line of an rsyslog file) are read in one pass;
-- only the lines they do not fit are tried as remote-kernel (year, maybe an offset) and BSD (neither)
-- stamps. BSD stamps have no year: they get the parameter year.
-- With template variable `message`, only the lines in which the parameter fields is found, with its
-- groups (m) and the rest of the line (syslog.syslog_prefixes): RE2 finds the whole match fastest
-- without groups, the groups are then read from the match alone, and the free text after it is cut
-- off by position (the match's text first occurs where it matched: an earlier copy would have been
-- the leftmost match). The match is filtered after the CTE: a filter right on it would find it twice.
-- With `unmatched` too, the lines where it is not found are kept (fields_found false): a line that
-- holds the reader's marker but not its fields is quarantined, never passed over as noise.
-- A stamp's offset is read into zone_seconds; zone_ok says whether any zone has it (parameter
-- max_offset_seconds, clock.MAX_UTC_OFFSET).
create temp table syslog_read as
with message_lines as (
    {% if message %}
    select
        *,
        regexp_extract(line, {{ param("fields") }}) as whole
    from syslog_lines
    {% else %}
    select * from syslog_lines
    {% endif %}
),

matched as (
    select
        source_line,
        {% if message %}whole, m, rest,{% endif %}
        iso,
        case when iso.host = '' then line end as undated_line,
        tagged
    from (
        select
            source_line,
            line,
            {% if message %}
            whole,
            regexp_extract(whole, {{ param("anchored_fields") }}, {{ param("groups") }}) as m,
            substr(line, strpos(line, whole) + length(whole)) as rest,
            {% endif %}
            regexp_extract(line, {{ param("iso") }}, {{ param("iso_groups") }}) as iso,
            regexp_matches(line, {{ param("tagged") }}) as tagged
        from message_lines
    )
),

stamped as (
    select
        source_line,
        {% if message %}whole, m, rest,{% endif %}
        iso as dated,
        null as bsd,
        null as undated_line,
        tagged
    from matched
    where {% if message and not unmatched %}whole <> '' and{% endif %} undated_line is null
    union all
    select
        source_line,
        {% if message %}whole, m, rest,{% endif %}
        case
            when remote.host <> '' then {
                'stamp': remote.stamp, 'fraction': remote.fraction, 'zone': remote.zone, 'host': remote.host
            }
        end as dated,
        case
            when remote.host = '' then regexp_extract(undated_line, {{ param("bsd") }}, {{ param("bsd_groups") }})
        end as bsd,
        undated_line,
        tagged
    from (
        select
            *,
            regexp_extract(undated_line, {{ param("remote_kern") }}, {{ param("remote_groups") }}) as remote
        from matched
        where {% if message and not unmatched %}whole <> '' and{% endif %} undated_line is not null
    )
)

select
    *,
    tagged and regexp_full_match(node, {{ param("node_name") }}) as node_ok,
    zone in ('', 'Z')
    or (try_cast(right(zone, 2) as bigint) < 60 and abs(zone_seconds) <= {{ param("max_offset_seconds") }}) as zone_ok
from (
    select
        *,
        coalesce(dated.host, nullif(bsd.host, '')) as node,
        case
            when dated is not null then try_strptime(dated.stamp, '%Y-%m-%dT%H:%M:%S')
            else try_strptime(
                {{ param("year") }} || ' ' || bsd.month || ' ' || bsd.day || ' ' || split_part(bsd.clock, '.', 1),
                '%Y %b %d %H:%M:%S'
            )
        end
        + to_microseconds(cast(
            rpad(left(coalesce(substr(dated.fraction, 2), split_part(bsd.clock, '.', 2)), 6), 6, '0') as bigint
        )) as local_ts,
        coalesce(dated.zone, '') as zone,
        case
            when coalesce(dated.zone, '') in ('', 'Z') then 0
            else
                if(left(dated.zone, 1) = '-', -1, 1)
                * (try_cast(substr(dated.zone, 2, 2) as bigint) * 3600 + try_cast(right(dated.zone, 2) as bigint) * 60)
        end as zone_seconds,
        {% if message %}whole <> ''{% else %}true{% endif %} as fields_found
    from stamped
)
