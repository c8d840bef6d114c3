"""The quick tier builds no month (docs/testing.md, tests/quick_tier.py): a test outside the `slow`
marker that builds a month, runs a flow or starts a server fails, naming itself, even when it
catches the exception; a slow test, and the dbt models' tests on a two-node month
(test_models_unit.py), may run dbt.

The test below runs pytest (in this process) on tests of its own, with dbt replaced by a stand-in."""

import pytest

import flows.warehouse.build as build

TESTS = """
from types import SimpleNamespace

import pytest

import flows.warehouse.build as build
from flows.deployments import monthly_report


def test_builds_a_month():
    spark = SimpleNamespace(warehouse=SimpleNamespace(engine="spark"))  # (one batch: straight to dbt)
    build._build(spark, {"2026-10": None})  # as build_months does


def test_catches_the_refusal():
    try:
        build.build_study(None, None, None, None)
    except Exception:
        pass


def test_runs_the_monthly_flow():
    monthly_report(cluster="c", config="c.toml", month="2026-10")


@pytest.fixture(scope="module")
def built_month():
    return build.dbt_command(None, {"2026-10": None}, "build")


def test_reads_a_built_month(built_month):
    pass


@pytest.mark.slow
def test_slow_builds_a_month():
    assert build.dbt_command(None, {"2026-10": None}, "build") == "dbt ran"
"""

MODELS = """
import flows.warehouse.build as build


def test_the_models_unit_tests():
    assert build.dbt_command(None, {"2026-10": None}, "build") == "dbt ran"
"""


def test_a_quick_test_that_builds_a_month_fails_naming_itself(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: builds months\n")
    pytester.makepyfile(test_inner=TESTS)
    (pytester.mkpydir("models") / "test_models_unit.py").write_text(MODELS)  # a package: not this suite's module
    with pytest.MonkeyPatch.context() as monkeypatch:  # dbt itself, stood in for: undone before this test ends
        monkeypatch.setattr(build, "dbt_command", lambda *args, **kwargs: "dbt ran")
        result = pytester.runpytest_inprocess("-p", "quick_tier", "-p", "no:cacheprovider")
    out = result.stdout.str()
    # the slow test and the models' test pass; the other four fail, one at its module fixture's set-up
    assert {"failed": 0, "errors": 0} | result.parseoutcomes() == {"passed": 2, "failed": 3, "errors": 1}, out
    dbt = "but runs dbt on a month's data (flows.warehouse.build.dbt_command: a month build)"
    for test in ("test_builds_a_month", "test_catches_the_refusal"):
        assert f"test_inner.py::{test} is not marked `slow` {dbt}" in out
    assert "test_inner.py::test_reads_a_built_month is not marked `slow` " + dbt in out  # its module fixture
    assert (
        "test_inner.py::test_runs_the_monthly_flow is not marked `slow` but runs the Prefect flow 'monthly-report'"
        in out
    )
    assert "read a saved month instead" in out.lower() and "mark the test `@pytest.mark.slow`" in out
    result.stdout.fnmatch_lines(
        ["FAILED test_inner.py::test_catches_the_refusal*", "ERROR test_inner.py::test_reads_a_built_month*"]
    )
