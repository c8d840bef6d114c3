"""Each figure's SQL exists once (issue 36): the marts (dbt_project/models/marts, models/study) share
no long fragment of SQL, so a range mart (a study's, a trailing window's) sums the monthly marts or
calls the macro the monthly mart calls (dbt_project/macros) instead of repeating its aggregation;
and every macro has its description in macros/_macros.yml. Computed from the files, no warehouse."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import yaml

from flows import DBT_PROJECT_DIR

MART_DIRS = [DBT_PROJECT_DIR / "models" / "marts", DBT_PROJECT_DIR / "models" / "study"]
# the longest run of tokens two marts may share: a figure's aggregation runs longer (the study's
# copies of monthly marts shared 26 to 50 tokens); idioms such as a count of infra failures, shorter
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
    return {path.stem: path for directory in MART_DIRS for path in sorted(directory.glob("*.sql"))}


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


def test_the_check_finds_a_study_mart_that_repeats_its_monthly_mart() -> None:
    """A range mart written out again from its monthly mart, with other aliases, is caught."""
    monthly = normalised_tokens((mart_files()["fct_failures_by_cause_monthly"]).read_text())
    copy = """
        select f.cause_category, count(*) as failures,
            cast(sum(case when f.gpus > {{ run_parameter('paper_min_gpus') }} then 1 else 0 end) as bigint)
                as failures_paper_jobs,
            cast(sum(case when f.slurm_state = 'NODE_FAIL' then 1 else 0 end) as bigint) as node_fail
        from {{ ref('fct_failures') }} as f where {{ in_study() }} group by f.cause_category
    """
    assert shared_runs(monthly, normalised_tokens(copy), SHARED_TOKENS)


def test_each_range_mart_reads_a_monthly_mart_or_calls_a_monthly_marts_macro() -> None:
    """The study's marts and the trailing windows' take their figures from a monthly mart (a ref
    or a macro argument naming it), or compute them with a macro that a monthly mart calls too."""
    macros, marts = defined_macros(), mart_files()
    monthly_calls = {
        call
        for name, path in marts.items()
        if name.endswith("_monthly")
        for call in MACRO_CALL.findall(path.read_text())
        if call in macros and call != "run_parameter"  # reads a parameter, computes nothing
    }
    ranges = [name for name in marts if name.startswith("fct_study_") or name.endswith("_trailing")]
    alone = [
        name
        for name in ranges
        if not re.search(r"'fct_\w+_monthly'", marts[name].read_text())
        and not monthly_calls & set(MACRO_CALL.findall(marts[name].read_text()))
    ]
    assert len(ranges) == 10 and not alone


def test_every_macro_is_described_once_in_the_macros_yml() -> None:
    described = [m["name"] for m in yaml.safe_load((DBT_PROJECT_DIR / "macros" / "_macros.yml").read_text())["macros"]]
    dispatched = {name for name in defined_macros() if "__" in name}  # an engine's form of a described macro
    assert sorted(described) == sorted(defined_macros() - dispatched)
    assert len(set(described)) == len(described)
