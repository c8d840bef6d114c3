-- When a dump of job records was taken, as far as its attempts tell: the latest Submit, Eligible,
-- Start or End, and for an attempt still running Start + Elapsed (sacct counts a running job's
-- Elapsed up to the dump).
select
    max(greatest(
        submit_at, eligible_at, start_at, end_at,
        case when end_at is null then start_at + to_seconds(elapsed_seconds) end
    )) as latest
from attempts
