-- Every row of sacct_lines numbered when DuckDB rejected the lines of sacct_line_shifts: those lines
-- are missing from the table, so row n (rowid + 1) is line n + #{j : r_j - j < n}, with the rejected
-- lines r_j in order and j from 1 (kept_before = r_j - j, shift = j); r_j - j never decreases, so an
-- ASOF join finds that count for every row at once. Column n is dropped after (sacct__drop_row_numbers.sql).
create or replace temp table sacct_lines as
with numbered as (
    select
        *,
        rowid + 1 as n
    from sacct_lines
),

shifts as (
    select
        kept_before,
        max(shift) as shift
    from sacct_line_shifts
    group by all
)

select l.* replace (coalesce(l.line_no, l.n + coalesce(s.shift, 0)) as line_no)
from numbered as l
asof left join shifts as s
    on l.n > s.kept_before
order by l.n
