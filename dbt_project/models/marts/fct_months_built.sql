-- One row per month built (the months of every period, dim_periods): its first instant, its end,
-- when its job records were dumped, and the window they observe, observed_start to period_end (the
-- fleet's node-days are counted over it). A build writes the rows of its months (run.months).

select
    month,
    month_start,
    month_end,
    as_of,
    observed_start,
    period_end
from {{ source('run', 'months') }}
