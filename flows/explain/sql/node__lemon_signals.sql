-- A node's lemon signals over each lemon window of the months asked (period ids month:YYYY-MM).
select
    period_id,
    lemon_window,
    incident_hours,
    failure_incidents,
    most_incidents_within_repeat_days,
    xid_cnt,
    out_count,
    tickets
from fct_node_lemon_signals
where node = {{ param("node") }} and period_id in (select unnest({{ param("periods") }}::varchar[]))
