-- The first and last local time without an offset: the DST switches looked for lie between.
select
    min(local_ts) as first_local,
    max(local_ts) as last_local
from syslog_read
where zone = ''
