-- How many rows {{ table }} has.
select count(*) as row_count from {{ table }}
