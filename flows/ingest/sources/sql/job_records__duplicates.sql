-- Temp table attempt_duplicates: the attempts with more than one record (overlapping daily dumps
-- concatenated), how many records are dropped, and the line kept. An attempt is its JobIDRaw, its
-- Submit and its array index (`12_3`, `12_[4-9]`: some dumps give an array's tasks one JobIDRaw;
-- the index as dbt's macro attempt_id reads it). Of its records, the one landed (docs/methodology.md
-- "Units") has the later End (a record without one, still open at its dump, is the oldest), else the
-- later line. Template variable end_utc: End in UTC (an expression over the staged columns).
create or replace temp table attempt_duplicates as
select
    job_id_raw,
    array_index,
    submit_at,
    count(*) - 1 as dropped,
    arg_max(source_line, { 'end': coalesce(end_utc, timestamp '0001-01-01'), 'line': source_line }) as kept_line
from (
    select
        job_id_raw,
        case when strpos(job_id, '_') > 0 then substr(job_id, strpos(job_id, '_')) end as array_index,
        submit_at,
        source_line,
        {{ end_utc }} as end_utc
    from attempts_staged
    where source_line not in (select p.source_line from attempt_problems as p)
)
group by all
having count(*) > 1
