-- Temp view attempts_staged (job_records.finish_attempts): the attempts that could be read, with the
-- staged columns (template variable columns: registry.STAGED_FIELDS).
create or replace temp view attempts_staged as
select {{ columns | join(", ") }}
from sacct_rows
where kind = 'attempt' and problem is null
