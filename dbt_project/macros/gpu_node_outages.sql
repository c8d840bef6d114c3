{% macro gpu_node_outages() -%}
    select outages.*
    from {{ ref('fct_node_outages') }} as outages
    inner join {{ ref('dim_nodes') }} as nodes on nodes.node = outages.node
    where nodes.is_gpu_node
{%- endmacro %}
