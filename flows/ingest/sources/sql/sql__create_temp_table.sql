-- Temp table {{ table }} from the Arrow table registered as {{ table }}_arrow (sql.create_temp_table).
create or replace temp table {{ table }} as
select * from {{ table }}_arrow
