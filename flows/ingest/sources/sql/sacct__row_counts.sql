-- The records read (steps included) and the steps, skipped.
select
    count_if(kind <> 'odd') as records,
    count_if(kind = 'step') as steps
from sacct_rows
