-- The fleet's distribution of each lemon signal over each lemon window of each period (the paper's
-- Fig. 11 CDFs): for each window, signal and value, the nodes at that value and the share of the
-- window's fleet (its GPU nodes, fct_period_lemon_fleet) at or below it. The nodes of the fleet
-- without a row in fct_node_lemon_signals are at 0 in every count; single_node_node_failure_rate is
-- over the nodes that have one.

{% set counts = ['xid_cnt', 'out_count', 'tickets', 'incident_hours', 'failure_incidents',
                 'multi_node_node_fails', 'single_node_node_fails'] %}

with fleet as (

    select
        period_id,
        lemon_window,
        nodes_without_signals
    from {{ ref('fct_period_lemon_fleet') }}

),

signals as (

    select *
    from {{ ref('fct_node_lemon_signals') }}

),

node_values as (

    {% for signal in counts + ['single_node_node_failure_rate'] %}
        select
            period_id,
            lemon_window,
            '{{ signal }}' as signal,
            cast({{ signal }} as double) as value,
            count(*) as nodes
        from signals
        where {{ signal }} is not null
        group by period_id, lemon_window, {{ signal }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

with_zeros as (

    select
        period_id,
        lemon_window,
        signal,
        value,
        nodes
    from node_values
    union all
    select
        fleet.period_id,
        fleet.lemon_window,
        count_signals.signal,
        0e0 as value,
        fleet.nodes_without_signals as nodes
    from fleet
    cross join (
        values {% for signal in counts %}('{{ signal }}'){% if not loop.last %}, {% endif %}{% endfor %}
    ) as count_signals (signal)
    where fleet.nodes_without_signals > 0

),

per_value as (

    select
        period_id,
        lemon_window,
        signal,
        value,
        sum(nodes) as nodes
    from with_zeros
    group by period_id, lemon_window, signal, value

)

select
    period_id,
    {{ run_parameter('cluster') }} as cluster,
    lemon_window,
    signal,
    value,
    nodes,
    cast(sum(nodes) over (partition by period_id, lemon_window, signal order by value) as double)
    / sum(nodes) over (partition by period_id, lemon_window, signal) as share_at_or_below
from per_value
