-- Temp view sacct_rows: the rows of sacct_lines from the first record (template variable
-- first_row_line: 2 after a header line; a view cannot take parameters, so the number is rendered),
-- each numbered by its line (source_line).
create or replace temp view sacct_rows as
select
    * exclude (line_no),
    coalesce(line_no, rowid + 1) as source_line
from sacct_lines
where coalesce(line_no, rowid + 1) >= {{ first_row_line | int }}
