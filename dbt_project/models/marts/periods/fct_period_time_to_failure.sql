-- Each period's (dim_periods) infrastructure failures of GPU attempts (fct_failures, each in the
-- month its attempt ended) by how long the attempt had run when it failed: within its first 10
-- minutes, within its first hour (the 10 minutes included), later; by cause, and over every cause
-- (cause_category null). Start-up faults (a bad node, a wrong configuration) strike early, wear-out
-- later (docs/methodology.md "When failures strike"). An attempt without a start time counts in
-- failures only.

with failures as (

    select
        failures.month,
        failures.cause_category,
        {{ dbt.datediff('attempts.start_at', 'attempts.end_at', 'second') }} as seconds_to_failure
    from {{ ref('fct_failures') }} as failures
    inner join {{ ref('fct_attempts') }} as attempts
        on attempts.month = failures.month and attempts.attempt_id = failures.attempt_id

),

by_cause as (

    {#- each cause, then every cause (cause_category null) -#}
    {%- for by_cause in [true, false] %}
        select
            periods.period_id,
            {{ 'facts.cause_category' if by_cause else 'cast(null as string)' }},
            count(*) as failures,
            cast(sum(case when facts.seconds_to_failure < 600 then 1 else 0 end) as bigint) as within_10_minutes,
            cast(sum(case when facts.seconds_to_failure < 3600 then 1 else 0 end) as bigint) as within_1_hour,
            cast(sum(case when facts.seconds_to_failure >= 3600 then 1 else 0 end) as bigint) as later,
            {{ median('facts.seconds_to_failure') }} / 3600e0 as median_hours
        from {{ period_rows('failures') }}
        group by periods.period_id{{ ', facts.cause_category' if by_cause }}
        {% if by_cause %}union all{% endif %}
    {%- endfor %}

)

select
    period_id,
    cause_category,
    failures,
    within_10_minutes,
    within_1_hour,
    later,
    {{ share('within_10_minutes', 'failures') }} as share_within_10_minutes,
    {{ share('within_1_hour', 'failures') }} as share_within_1_hour,
    median_hours
from by_cause
