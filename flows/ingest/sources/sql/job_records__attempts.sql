-- Temp view attempts: the staged records landed, times in UTC (template variable utc, as in
-- job_records__problems.sql), less the quarantined ones and (template variable duplicates:
-- attempt_duplicates has rows) the duplicates not kept; NNodes 0 repaired from the host list
-- (template variable repairs: node_count_repairs has rows), as the BIGINT every count lands as
-- (registry.TABLES; a host list's size is a HUGEINT, or a DOUBLE once the scanner sized it). Either join only
-- when it has rows: a join changes the order the landing writes the rows in. A view: the landing
-- writes it to Parquet once; a table would copy millions of rows first.
create or replace temp view attempts as
select
    s.* replace (
        {% if repairs %}cast(coalesce(r.size, s.n_nodes) as bigint){% else %}s.n_nodes{% endif %} as n_nodes,
        {{ utc.submit_at }} as submit_at,
        {{ utc.eligible_at }} as eligible_at,
        {{ utc.start_at }} as start_at,
        {{ utc.end_at }} as end_at
    )
from attempts_staged as s
{% if repairs %}left join node_count_repairs as r on s.source_line = r.source_line{% endif %}
where
    s.source_line not in (select p.source_line from attempt_problems as p)
    {% if duplicates %}and not exists (
        select 1 from attempt_duplicates as d
        where
            d.job_id_raw = s.job_id_raw
            and d.array_index
            is not distinct from case when strpos(s.job_id, '_') > 0 then substr(s.job_id, strpos(s.job_id, '_')) end
            and d.submit_at = s.submit_at
            and d.kept_line <> s.source_line
    ){% endif %}
