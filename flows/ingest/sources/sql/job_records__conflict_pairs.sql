-- The first `sample` conflicts (in line order), each as the kept line and the first other line that
-- differs from it: (job_id, kept, other, whether the kept End is the later, [[field, kept value,
-- other value], ...] in sacct's names), ordered by their lines.
with sampled as (
    select * from attempt_conflicts
    order by first_line
    limit {{ param("sample") }}
),

records as (
    select
        s.*,
        d.kept_line
    from ended_records as s
    inner join sampled as d
        on
            s.job_id_raw = d.job_id_raw
            and s.submit_at = d.submit_at
            and s.array_index is not distinct from d.array_index
)

select
    k.job_id,
    k.source_line as kept,
    o.source_line as other,
    k.end_utc > o.end_utc as later_end,
    [
        ['State', k.state_shown, o.state_shown],
        ['ExitCode', k.exit_code_shown, o.exit_code_shown],
        ['Eligible', k.eligible_shown, o.eligible_shown],
        ['Start', k.start_shown, o.start_shown],
        ['End', k.end_shown, o.end_shown]
    ] as shown
from records as k
inner join records as o
    on k.source_line = k.kept_line and o.kept_line = k.source_line and o.source_line <> k.source_line
where
    k.state_shown is distinct from o.state_shown
    or k.exit_code_shown is distinct from o.exit_code_shown
    or k.eligible_shown is distinct from o.eligible_shown
    or k.start_shown is distinct from o.start_shown
    or k.end_shown is distinct from o.end_shown
qualify row_number() over (partition by k.source_line order by o.source_line) = 1
order by least(kept, other), greatest(kept, other)
