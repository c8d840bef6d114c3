-- The quarantined records' (source_line, field, value, reason), in line order.
select
    source_line,
    field,
    value,
    reason
from attempt_problems
order by source_line
