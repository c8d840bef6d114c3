"""The quick tier builds no month (docs/testing.md): a pytest plugin (tests/conftest.py loads it).

While a test that is not marked `slow` runs (its fixtures' set-up and tear-down included, a
module fixture's too), the ways into a month build refuse and fail that test, naming it:

- a Prefect flow run (monthly-report, backfill, study...: each starts Prefect's server and builds months);
- dbt on a month's data (flows.warehouse.build.dbt_command, which build_months, its rebuild and
  build_study call; and its run parameters, which every dbt run writes first, for a test that
  imported dbt_command by name). The dbt models' tests on a two-node month (tests/test_models_unit.py,
  their unit tests among them) are the quick tier's one file that runs dbt;
- the temporary Prefect API server of `reliability-report run` (flows/core/prefect_api.py), and the
  `prefect_server` and `browser` fixtures (tests/conftest.py calls `refuse`).

The test fails even if it catches the exception (a flow turns a task's exception into a failed
state): the refusal is kept with the test and its report is made a failure.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator

import pytest

SAVED_MONTH = "tests/data/golden/reports/month/metrics.json"
# the dbt models' tests on a two-node month: the quick tier's one file that may run dbt (docs/testing.md)
DBT_TEST_FILES = {"test_models_unit.py"}


class MonthBuildInQuickTier(Exception):
    """A test outside the `slow` marker built a month or started a server."""


_REFUSED = pytest.StashKey[list[tuple[str, str]]]()  # on the item: (phase, message)
_RUNNING = pytest.StashKey["tuple[pytest.Item, str] | None"]()  # on the config: the quick test running, its phase


def quick_tier_message(nodeid: str, what: str) -> str:
    return (
        f"{nodeid} is not marked `slow` but {what}: the quick tier (`make test-fast`) builds no month and "
        "starts no server (docs/testing.md). Read a saved month instead (e.g. render "
        f"{SAVED_MONTH} with flows.report.render.write_report), or mark the test "
        "`@pytest.mark.slow` (a file: `pytestmark = pytest.mark.slow`)."
    )


def refuse(config: pytest.Config, what: str) -> None:
    """Fail the quick-tier test running now (if one is) for doing `what`; nothing in a slow test."""
    running = config.stash.get(_RUNNING, None)
    if running is None:
        return
    item, phase = running
    message = quick_tier_message(item.nodeid, what)
    item.stash.setdefault(_REFUSED, []).append((phase, message))
    raise MonthBuildInQuickTier(message)


def _refusing(config: pytest.Config, what: str, original: Callable) -> Callable:
    @functools.wraps(original)
    def refused(*args, **kwargs):
        refuse(config, what)
        return original(*args, **kwargs)  # not reached in a quick test

    return refused


def _guard(monkeypatch: pytest.MonkeyPatch, item: pytest.Item) -> None:
    config = item.config
    import flows.core.prefect_api
    import flows.warehouse.build as build  # light (~0.8 s), and imported by the collection already

    if item.path.name not in DBT_TEST_FILES:
        what = "runs dbt on a month's data (flows.warehouse.build.dbt_command: a month build)"
        monkeypatch.setattr(build, "dbt_command", _refusing(config, what, build.dbt_command))
        monkeypatch.setattr(build, "run_parameters", _refusing(config, what, build.run_parameters))
    server = "starts the temporary Prefect API server (flows.core.prefect_api.start_api)"
    monkeypatch.setattr(
        flows.core.prefect_api, "_TemporaryServer", _refusing(config, server, flows.core.prefect_api._TemporaryServer)
    )
    if prefect_flows := sys.modules.get("prefect.flows"):  # no flow can run before Prefect is imported
        call = prefect_flows.Flow.__call__

        def flow_call(flow, *args, **kwargs):
            refuse(config, f"runs the Prefect flow {flow.name!r} (Prefect's server, and month builds)")
            return call(flow, *args, **kwargs)

        monkeypatch.setattr(prefect_flows.Flow, "__call__", flow_call)


def _phase(item: pytest.Item, phase: str) -> Iterator[None]:
    if item.get_closest_marker("slow"):
        return (yield)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _guard(monkeypatch, item)
        item.config.stash[_RUNNING] = (item, phase)
        try:
            return (yield)
        finally:
            item.config.stash[_RUNNING] = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _phase(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    return (yield from _phase(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    return (yield from _phase(item, "teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A refused phase fails, whatever the test did with the exception: the refusal comes first."""
    report = yield
    messages = [message for phase, message in item.stash.get(_REFUSED, []) if phase == call.when]
    if messages and not report.skipped:
        said = f"\n\n{report.longrepr}" if report.failed and report.longrepr else ""
        report.outcome = "failed"
        report.longrepr = "\n".join(dict.fromkeys(messages)) + said
    return report


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RUNNING] = None
