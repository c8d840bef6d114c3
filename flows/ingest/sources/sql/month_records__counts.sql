-- The job records of each month of temp table report_months(month, month_start, month_end), from
-- {{ source }}(job_id, submit_at, start_at, end_at), the times and the bounds in one clock. The one
-- rule of what a month's records are, the one dbt's int_attempts_month_scoped applies: submitted
-- before the month's end and not ended before its start (still running: no End). Job steps
-- (`123.batch`, `123.0`) are not attempts. With each month, the evidence of where its records begin
-- to observe it (flows/core/months.py observed_start): the Ends in the month, its earliest and latest.
select
    m.month,
    count(r.submit_at) as records,
    count(case when r.end_at >= m.month_start and r.end_at < m.month_end then r.end_at end) as ends,
    min(case when r.end_at >= m.month_start and r.end_at < m.month_end then r.end_at end) as first_end,
    max(case when r.end_at >= m.month_start and r.end_at < m.month_end then r.end_at end) as last_end
from report_months as m
left join {{ source }} as r
    on
        r.submit_at < m.month_end
        and (r.end_at is null or r.end_at >= m.month_start)
        and not contains(coalesce(r.job_id, ''), '.')
group by m.month
order by m.month
