-- How many of the times of {{ table }} are ambiguous and how many nonexistent (the sums of
-- clock.LocalClock.sql_doubtful_counts' aggregates over one or more columns).
select
    {{ ambiguous }} as ambiguous,
    {{ nonexistent }} as nonexistent
from {{ table }}
