-- The attempts a job-record reader left, staged columns (template variable columns), in line order.
select {{ columns | join(", ") }}
from attempts
order by source_line
