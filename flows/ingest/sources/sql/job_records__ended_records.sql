-- Temp view ended_records: the kept records with an End, keyed as attempt_duplicates, with what two
-- ended records of one attempt must agree on (its outcome and times, as sacct prints them), and its
-- hash, to compare them in one pass. An open record superseded by an ended one is no conflict.
-- Template variable end_utc as in job_records__duplicates.sql.
create or replace temp view ended_records as
select
    job_id_raw,
    case when strpos(job_id, '_') > 0 then substr(job_id, strpos(job_id, '_')) end as array_index,
    submit_at,
    job_id,
    source_line,
    {{ end_utc }} as end_utc,
    hash(state, cancelled_by_uid, exit_code, exit_signal, eligible_at, start_at, end_at) as fields,
    coalesce(state || coalesce(' by ' || cancelled_by_uid, ''), '') as state_shown,
    coalesce(exit_code || ':' || exit_signal, '') as exit_code_shown,
    coalesce(strftime(eligible_at, '%Y-%m-%dT%H:%M:%S'), '') as eligible_shown,
    coalesce(strftime(start_at, '%Y-%m-%dT%H:%M:%S'), '') as start_shown,
    coalesce(strftime(end_at, '%Y-%m-%dT%H:%M:%S'), '') as end_shown
from attempts_staged
where source_line not in (select p.source_line from attempt_problems as p) and end_at is not null
