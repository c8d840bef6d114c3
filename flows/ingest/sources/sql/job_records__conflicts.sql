-- Temp table attempt_conflicts: the duplicated attempts whose ended records disagree (their hashes
-- differ), with the kept line and the first line of the attempt's ended records.
create or replace temp table attempt_conflicts as
select
    d.job_id_raw,
    d.array_index,
    d.submit_at,
    d.kept_line,
    min(s.source_line) as first_line
from ended_records as s
inner join attempt_duplicates as d
    on
        s.job_id_raw = d.job_id_raw
        and s.submit_at = d.submit_at
        and s.array_index is not distinct from d.array_index
group by all
having min(s.fields) <> max(s.fields)
