-- Temp table job_record_times(job_id, submit_at, start_at, end_at): the times of every record of a
-- sacct dump (parameter path), read cheaply to count a month's records before any work: each line
-- read whole, split at the delimiter, the four fields taken by their 1-based position (parameters
-- job_id, submit, start, end) and typed (a time sacct prints as Unknown or None is NULL). Lines
-- before first_row_line (a header) are skipped; a line of the wrong width may give wrong fields:
-- its times then fail to type, and it counts as no record (the landing quarantines it, with why).
create or replace temp table job_record_times as
with parts as (
    select
        row_number() over () as line_no,
        string_split(rtrim(line, chr(13)), {{ param("delimiter") }}) as p
    from
        read_csv(
            {{ param("path") }},
            columns = { 'line': 'VARCHAR' }, header = false,
            delim = {{ param("line_sentinel") }}, quote = '', escape = '',
            auto_detect = false, ignore_errors = true
        )
)

select
    p[{{ param("job_id") }}] as job_id,
    try_cast(p[{{ param("submit") }}] as timestamp) as submit_at,
    try_cast(p[{{ param("start") }}] as timestamp) as start_at,
    try_cast(p[{{ param("end") }}] as timestamp) as end_at
from parts
where line_no >= {{ param("first_row_line") }} and len(p) >= {{ param("width") }}
