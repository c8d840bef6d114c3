-- (source_line, field, value, reason) of the attempts that could not be read.
select
    source_line,
    problem.field,
    problem.value,
    problem.reason
from sacct_rows
where kind = 'attempt' and problem is not null
