-- The lines DuckDB could not read (not UTF-8, or over its size limit), each once, in order.
select distinct line from sacct_rejects
order by line
