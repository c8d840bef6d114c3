-- Temp table syslog_dated: each line of syslog_read with its time in UTC (ts: a time without an offset
-- by the clock, template variable to_utc, an expression over local_ts; one with an offset by it) and,
-- for a line that is not read, the problem (field, reason): no prefix, a host that is no node name,
-- no valid date, an offset no zone has, a time outside the clock's window of valid times
-- (clock.LocalClock.sql_window), the reader's marker without its fields. The one place these rules
-- are applied: syslog__problems lists the problems, syslog__found the lines read.
create temp table syslog_dated as
select
    *,
    case
        when node is null then { 'field': 'timestamp', 'reason': {{ param("no_prefix") }} }
        when not tagged then { 'field': 'host', 'reason': {{ param("not_tagged") }} }
        when not node_ok then { 'field': 'host', 'reason': {{ param("node_name_rule") }} }
        when local_ts is null then { 'field': 'timestamp', 'reason': 'not a valid date and time' }
        when not zone_ok then { 'field': 'timestamp', 'reason': {{ param("offset_rule") }} }
        when ts < {{ param("earliest") }} then { 'field': 'timestamp', 'reason': {{ param("too_early") }} }
        when ts > {{ param("latest") }} then { 'field': 'timestamp', 'reason': {{ param("too_late") }} }
        when not fields_found then { 'field': {{ param("unmatched_field") }}, 'reason': {{ param("unmatched_reason") }} }
    end as problem
from (
    select
        *,
        case
            when zone = '' then {{ to_utc }}
            when zone_ok then local_ts - to_seconds(zone_seconds)
        end as ts
    from syslog_read
)
