"""Each figure's SQL exists once (issues 36, 43): one mart per figure, keyed by period
(dbt_project/models/marts/periods, dim_periods), no twin of it for a month, a trailing window or a
study; the marts share no long fragment of SQL (what two need is a macro, dbt_project/macros); and
every macro has its description in macros/_macros.yml. Computed from the files, no warehouse."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import yaml

from flows import DBT_PROJECT_DIR

MARTS = DBT_PROJECT_DIR / "models" / "marts"
# the longest run of tokens two marts may share: a figure's aggregation runs longer (issue 36's
# study copies of monthly marts shared 26 to 50 tokens); idioms such as a count of infra failures, shorter
SHARED_TOKENS = 20
TOKEN = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\w+|'[^']*'|[^\s\w]", re.S)
MACRO_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\(")


def normalised_tokens(sql: str) -> list[str]:
    """The file's SQL as tokens: lower case, without comments, table qualifiers or spacing (a Jinja
    expression is one token), so that a copy with other aliases or layout is still a copy."""
    sql = re.sub(r"\{#.*?#\}|--[^\n]*", " ", sql.lower(), flags=re.S)
    sql = re.sub(r"\b[a-z_][a-z0-9_]*\.(?=[a-z_])", "", sql)
    return [re.sub(r"\s+", "", token) for token in TOKEN.findall(sql)]


def shared_runs(a: list[str], b: list[str], length: int) -> list[str]:
    """The runs of `length` tokens that occur in both."""
    runs = {tuple(a[i : i + length]) for i in range(len(a) - length + 1)}
    return [" ".join(run) for run in {tuple(b[i : i + length]) for i in range(len(b) - length + 1)} & runs]


def mart_files() -> dict[str, Path]:
    return {path.stem: path for path in sorted(MARTS.rglob("*.sql"))}


def defined_macros() -> set[str]:
    return {
        name
        for path in (DBT_PROJECT_DIR / "macros").glob("*.sql")
        for name in re.findall(r"\{%-?\s*macro\s+(\w+)", path.read_text())
    }


def test_no_two_marts_share_a_long_fragment_of_sql() -> None:
    tokens = {name: normalised_tokens(path.read_text()) for name, path in mart_files().items()}
    shared = [
        f"{a} and {b}: {runs[0]}"
        for a, b in combinations(sorted(tokens), 2)
        if (runs := shared_runs(tokens[a], tokens[b], SHARED_TOKENS))
    ]
    assert not shared


def test_the_check_finds_a_mart_that_repeats_another() -> None:
    """A mart written out again from another, with other aliases, is caught."""
    causes = normalised_tokens((mart_files()["fct_period_failures_by_cause"]).read_text())
    copy = """
        select f.month, f.cause_category, count(*) as failures,
            cast(sum(case when f.gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end) as bigint)
                as failures_paper_jobs,
            cast(sum(case when f.slurm_state = 'NODE_FAIL' then 1 else 0 end) as bigint) as node_fail
        from {{ ref('fct_failures') }} as f group by f.month, f.cause_category
    """
    assert shared_runs(causes, normalised_tokens(copy), SHARED_TOKENS)


def test_each_figure_is_one_mart_keyed_by_period() -> None:
    """No mart is a month's, a trailing window's or a study's twin of a figure's mart: the figures'
    marts (models/marts/periods), the lemon windows among them, are keyed by period_id (their yml's
    key), and no month-only scheme is left beside them (no `_monthly` mart)."""
    marts = mart_files()
    periods = [name for name, path in marts.items() if path.parent.name == "periods"]
    assert len(periods) >= 12
    keys = {
        name: yaml.safe_load(marts[name].with_suffix(".yml").read_text())["models"][0]["data_tests"][0][
            "column_checks"
        ]["arguments"]["unique_keys"][0]
        for name in periods
    }
    assert all(key[0] == "period_id" for key in keys.values()), keys
    assert [name for name in marts if name.startswith("fct_study_") or name.endswith("_trailing")] == []
    assert [name for name in marts if name.endswith("_monthly")] == []


def test_every_macro_is_described_once_in_the_macros_yml() -> None:
    described = [m["name"] for m in yaml.safe_load((DBT_PROJECT_DIR / "macros" / "_macros.yml").read_text())["macros"]]
    dispatched = {name for name in defined_macros() if "__" in name}  # an engine's form of a described macro
    assert sorted(described) == sorted(defined_macros() - dispatched)
    assert len(set(described)) == len(described)
