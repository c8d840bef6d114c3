-- The lines of the wrong width (or blank): Python reassembles them (parsable.assemble_rows).
select
    source_line,
    odd_text
from sacct_rows
where kind = 'odd'
