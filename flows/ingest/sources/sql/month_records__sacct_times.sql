-- Temp table job_record_times(job_id, submit_at, start_at, end_at): the times of every record of a
-- sacct dump (parameter path), read cheaply to count a month's records before any work: DuckDB's
-- CSV reader parses only the four fields taken (template variables job_id, submit, start, end: their
-- 1-based positions among the width columns), a sixth of the CPU of splitting whole lines as the
-- reader does. The skip lines before the first record (a header) are passed over; a time sacct
-- prints as Unknown or None is NULL (typed as the reader does, try_cast: on an expression, nullif,
-- not the bare column, which DuckDB 2.0 would push into the CSV reader as a strict cast that drops
-- the row). A row of the wrong width (a `|` or a newline in a job name) is passed over or gives no
-- time: it counts as no record (the landing reads it, or says why not); so does a piece of a record
-- that a lone carriage return cut (strict_mode off: a CR ends a row, never fails the file).
create or replace temp table job_record_times as
select
    c{{ job_id }} as job_id,
    try_cast(nullif(c{{ submit }}, '') as timestamp) as submit_at,
    try_cast(nullif(c{{ start }}, '') as timestamp) as start_at,
    try_cast(nullif(c{{ end }}, '') as timestamp) as end_at
from
    read_csv(
        {{ param("path") }},
        columns = {
            {% for i in range(1, width + 1) %}'c{{ i }}': 'VARCHAR'{{ "," if not loop.last }}{% endfor %}
        },
        header = false, skip = {{ param("skip") }}, delim = {{ param("delimiter") }},
        quote = '', escape = '', auto_detect = false, ignore_errors = true, null_padding = true,
        strict_mode = false
    )
