{#- The two sets of long job runs whose ETTR is reported (the paper's Fig. 9): every run (run_set
    'all') and the highest-priority ones ('priority'); `runs` is a relation or CTE of
    fct_job_run_histories rows. -#}
{% macro ettr_run_sets(runs) -%}
    select
        'all' as run_set,
        {{ runs }}.*
    from {{ runs }}
    union all
    select
        'priority' as run_set,
        {{ runs }}.*
    from {{ runs }}
    where {{ runs }}.is_priority_run
{%- endmacro %}

{#- The sample standard deviation of ETTR from its ordered means (mean_ettr, mean_ettr_squared over
    `runs` runs): the same figure on both engines, whatever order the rows come in. -#}
{% macro ettr_stddev_from_means() -%}
    case
        when runs > 1
            then sqrt(greatest(runs / (runs - 1e0) * (mean_ettr_squared - mean_ettr * mean_ettr), 0))
    end
{%- endmacro %}
