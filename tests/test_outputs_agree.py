"""Issue 51, item 4: every output says the same thing of every figure (the walk: tests/outputs_agree.py).

Measured on main: a month with no GPU job said "Infrastructure failures: not measured: no GPU job ran
this month" while metrics.prom exported `reliability_infrastructure_failures 0.0`, metrics.json
`totals.infra_failures: 0` and the console "11,249 attempts, 0 infrastructure failures"; a month whose
one GPU attempt was still running at its end showed a large 0 "of 1 GPU attempts".

The walk runs over report directories: in the quick tier, the saved month (tests/data/golden) rendered
as it is (the demo's shape: every source, a month of exposure), made thin, made CPU-only and made one
GPU attempt still running at the month's end, as flows/figures/measured.py writes them; in the slow
tier, months the pipeline built that other tests build too (each once per session): the demo month
(tests/test_report.py), a thin month of 2 GPU jobs (tests/test_measured.py) and a CPU-only month of
the real Open XDMoD dump (tests/data/xdmod, its console output kept).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA_DIR, session_directory
from outputs_agree import assert_outputs_agree, assert_study_agrees, text_of
from test_first_month_texts import cpu_only_month
from test_measured import JOBS_ONLY, PARAMS, golden_month, thin, thin_month_built
from test_report import OCTOBER, built_months

from flows.figures.measured import exposure, not_measured, write_unmeasured
from flows.report.render import write_report
from flows.report.study_report import render_study

XDMOD = DATA_DIR / "xdmod" / "accounting-logs.log"  # a CPU-only cluster's real dump: 3 records end in 2015-07


def config_for(reports: Path, cluster: str) -> Path:
    """A config whose reports directory is `reports` (the chat message links the report there)."""
    path = reports.parent / f"{cluster}.toml"
    path.write_text(
        f'cluster = "{cluster}"\n\n[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n'
        f'[paths]\ndata = "data"\nreports = "{reports}"\nwarehouse = "w.duckdb"\n'
    )
    return path


def still_running() -> dict:
    """The saved month with one GPU attempt, still running at the month's end (jobs only)."""
    m = thin(golden_month(), JOBS_ONLY, node_days=0.6, gpu_attempts=1, cpu_only=61)
    seen = exposure(JOBS_ONLY, m["totals"], m["node_failure_rate"], gpu_ended_attempts=0)
    return write_unmeasured(m, not_measured(seen, PARAMS))


SAVED: dict[str, Callable[[], dict]] = {
    "demo-saved": golden_month,
    "thin-saved": lambda: thin(golden_month(), JOBS_ONLY, node_days=10.2, gpu_attempts=2, cpu_only=3858),
    "cpu-only-saved": cpu_only_month,
    "gpu-attempt-running-saved": still_running,
}


def rendered(name: str, root: Path) -> tuple[Path, Path, str | None]:
    """A saved month made `name`, rendered as the pipeline writes it (charts left out: seconds each)."""
    metrics = SAVED[name]()
    reports = root / "reports"
    report_dir = reports / metrics["cluster"] / metrics["month"]
    report_dir.mkdir(parents=True)
    write_report(report_dir, metrics)
    return report_dir, config_for(reports, metrics["cluster"]), None


def demo_month(tmp_path_factory) -> tuple[Path, Path, str | None]:
    """October of tests/test_report.py's demo cluster (built once per session)."""
    report_dir = built_months(tmp_path_factory)[str(OCTOBER)]
    config = json.loads((report_dir.parents[2] / "built.json").read_text())["config"]
    return report_dir, Path(config), None


def cpu_only_month_built(tmp_path_factory) -> tuple[Path, Path, str | None]:
    """2015-07 of the real Open XDMoD dump of a CPU-only cluster, built by `run` (once per session),
    with the console's output."""
    from flows.cli import main

    with session_directory(tmp_path_factory, "xdmod-cpu-only") as root:
        config = root / "xdmod.toml"
        console = root / "console.txt"
        if not console.exists():
            shutil.copy(XDMOD, root / "x.log")
            config.write_text(
                'cluster = "xdmod"\n\n[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n\n'
                f'[paths]\ndata = "data"\nreports = "{root / "reports"}"\nwarehouse = "xdmod.duckdb"\n'
            )
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["run", "--month", "2015-07", "--config", str(config)]) == 0
            console.write_text(out.getvalue())
    return root / "reports" / "xdmod" / "2015-07", config, console.read_text()


# the months the pipeline built: the demo's, tests/test_measured.py's of 2 GPU jobs on 0.2 node-days
# (jobs only, with `run`'s line of counts), the XDMoD dump's
BUILT = {"demo": demo_month, "thin": thin_month_built, "cpu-only": cpu_only_month_built}
# what each month is: figures it cannot measure (its premise)
PREMISE = {
    "demo": set(),
    "thin": {"node_failure_rate.all", "fleet_fault_rate"},
    "cpu-only": {"totals.infra_failures", "node_failure_rate.all", "fleet_fault_rate"},
    "demo-saved": set(),
    "thin-saved": {"node_failure_rate.all", "fleet_fault_rate"},
    "cpu-only-saved": {"totals.infra_failures", "node_failure_rate.all", "fleet_fault_rate"},
    "gpu-attempt-running-saved": {"totals.infra_failures", "node_failure_rate.all", "fleet_fault_rate"},
}


@pytest.mark.parametrize("month", [*SAVED, *(pytest.param(name, marks=pytest.mark.slow) for name in BUILT)], ids=str)
def test_every_output_says_the_same_of_every_figure(month: str, tmp_path, tmp_path_factory, without_charts):
    """The page, the email, report.txt, metrics.json, metrics.prom, the archive's card, the chat message
    and the console show each figure of the typed document with the same value or "not measured"."""
    if month in BUILT:
        report_dir, config, console = BUILT[month](tmp_path_factory)
    else:
        report_dir, config, console = rendered(month, tmp_path)
    gaps = assert_outputs_agree(report_dir, config, console)
    assert PREMISE[month] <= set(gaps), gaps  # the month is what its name says


@pytest.mark.parametrize("study", ["thin", "cpu-only"])
def test_every_output_of_a_study_says_the_same_of_every_figure(study: str, monkeypatch):
    """The study's page, email, text, metrics.json and chat message, of tests/test_study_thin.py's
    studies: one cluster thin, and both CPU-only (charts left out: seconds each)."""
    from test_study_thin import cpu_only_study, thin_study

    monkeypatch.setattr("flows.report.render.render_charts", lambda study: {})

    assert_study_agrees(render_study(thin_study() if study == "thin" else cpu_only_study()))


# --- the measured cases, each on its own ---------------------------------------------------------


def samples(prom: str, name: str) -> list[str]:
    return [line for line in prom.splitlines() if line.startswith(f"reliability_{name}{{")]


@pytest.mark.slow  # builds the walk's CPU-only month (once per session)
def test_a_cpu_only_month_exports_no_0_infrastructure_failures(tmp_path_factory):
    """A real XDMoD dump of a CPU cluster: main's report said "Infrastructure failures: not measured: no
    GPU job ran this month" while metrics.prom exported 0.0, metrics.json 0 and the console "0
    infrastructure failures"."""
    report_dir, _, console = cpu_only_month_built(tmp_path_factory)
    metrics = json.loads((report_dir / "metrics.json").read_text())
    assert metrics["totals"]["gpu_attempts"] == 0 and metrics["totals"]["attempts"] == 3
    assert metrics["totals"]["infra_failures"] is None
    assert metrics["not_measured"]["totals.infra_failures"] == "no GPU job ran this month"
    assert not samples((report_dir / "metrics.prom").read_text(), "infrastructure_failures")
    assert "xdmod 2015-07: 3 attempts, infrastructure failures not measured: no GPU job ran this month;" in console
    assert "0 infrastructure failures" not in console
    assert "Infrastructure failures: not measured: no GPU job ran this month" in (report_dir / "report.txt").read_text()


def test_a_gpu_attempt_still_running_at_the_months_end_is_no_0_of_1(tmp_path):
    """A month whose one GPU attempt was still running at its end: main's tile showed a large 0 "of 1 GPU
    attempts" (nothing ended, so nothing could have failed); now "not measured" and why, everywhere."""
    report_dir, _, _ = rendered("gpu-attempt-running-saved", tmp_path)
    metrics = json.loads((report_dir / "metrics.json").read_text())
    why = "no GPU attempt ended this month (1 GPU attempt still running at its end)"
    assert metrics["not_measured"]["totals.infra_failures"] == why and metrics["totals"]["infra_failures"] is None
    (card,) = [h for h in metrics["summary"]["headline"] if h["key"] == "infra_failures"]
    assert card["value"] is None and card["not_measured"] == why
    page = text_of((report_dir / "report.html").read_text())
    assert f"Infrastructure failures not measured {why}" in page and "of 1 GPU attempts" not in page
    assert not samples((report_dir / "metrics.prom").read_text(), "infrastructure_failures")
