-- One row per month built (the months of every period, dim_periods): its first instant, its end,
-- when its job records were dumped and where its observed time ends (period_end: the fleet's
-- node-days are counted up to it). The month's own build writes its row.

select
    month,
    month_start,
    month_end,
    as_of,
    period_end
from {{ source('run', 'parameters') }}
