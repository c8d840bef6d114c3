{% macro node_failure_rate_sums() -%}
    cast(coalesce(sum(paper_failures), 0) as bigint) as paper_failures,
    cast(coalesce(sum(paper_node_seconds), 0) as bigint) / 86400e0 as paper_node_days,
    cast(coalesce(sum(all_failures), 0) as bigint) as all_failures,
    cast(coalesce(sum(all_node_seconds), 0) as bigint) / 86400e0 as all_node_days
{%- endmacro %}
