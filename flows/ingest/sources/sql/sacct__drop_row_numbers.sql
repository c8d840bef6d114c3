-- The row numbers that numbered the lines (sacct__number_lines_around.sql).
alter table sacct_lines drop column n
