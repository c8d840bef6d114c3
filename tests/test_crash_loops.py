"""Crash loops (issue 53): the figure recovers, exactly, the jobs the simulator sent into a crash
loop (requeued again and again) and those its preemptions and faults interrupted as often, over
several seeds: how many, their interruptions and GPU-hours, and the worst with their counts; a
period without one says 0 (measured), one without GPU exposure says why it is not measured; the
pages show the worst jobs' names (the users' words) as inert text."""

import json
import re

import duckdb
import pytest
from conftest import DATA_DIR
from simulated_build import simulated_build
from test_report import Page

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.crash_loops import crash_loops
from flows.figures.figure import Reading
from flows.figures.measured import Exposure, unmeasured_codes
from flows.figures.period import Period
from flows.figures.read import month_document
from flows.report.render import render_pages
from simulator import SimParams

FIRST, LAST = Month.parse("2026-09"), Month.parse("2026-10")
MODELS = ("+fct_period_crash_loops",)
EVERY_JOB = AnalysisConfig(breakdown_top=1000)  # every loop among the worst, to compare each job


def figure_of(con, period: Period, params: AnalysisConfig = EVERY_JOB) -> dict:
    return crash_loops(Reading(con, period, params, {}, {}, []))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [8, 9, 10])
def test_crash_loops_recover_the_injected_loops(tmp_path, fresh_warehouse, seed):
    """Two continuous months of 24 GPU nodes, 1% of the jobs in a crash loop: each month's loops
    (job by job: interruptions, failed, requeued, preempted, GPU-hours) are the truth's, the worst
    first; the three-month window of the second counts a loop across the month end once."""
    cluster = f"loop{seed}"
    params = SimParams(cluster, FIRST, last_month=LAST, nodes=24, seed=seed, crash_loop_share=0.01)
    truth, config = simulated_build(tmp_path, fresh_warehouse, params, MODELS)
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        months = {month: figure_of(con, Period.of_month(month)) for month in (FIRST, LAST)}
        top3 = figure_of(con, Period.of_month(LAST), AnalysisConfig(breakdown_top=3))
    for month, figure in months.items():
        expected = truth[str(month)]["crash_loops"]
        assert expected["jobs"] >= 3  # the premise: loops to find
        assert (figure["min_interruptions"], figure["jobs"], figure["interruptions"]) == (
            expected["min_interruptions"],
            expected["jobs"],
            expected["interruptions"],
        )
        assert figure["gpu_hours"] == pytest.approx(expected["gpu_hours"], rel=1e-9)
        worst = figure["worst"]
        assert [j["loop_rank"] for j in worst] == list(range(1, len(worst) + 1))
        assert [j["interruptions"] for j in worst] == sorted((j["interruptions"] for j in worst), reverse=True)
        by_job = {j["job_id"]: j for j in worst}
        assert set(by_job) == set(expected["by_job"])
        for job_id, job in expected["by_job"].items():
            got = by_job[job_id]
            assert (got["failures"], got["requeues"], got["preemptions"], got["gpus"]) == (
                job["failures"],
                job["requeues"],
                job["preemptions"],
                job["gpus"],
            )
            assert got["gpu_hours"] == pytest.approx(job["gpu_hours"], rel=1e-9)
    assert len(top3["worst"]) == 3 and top3["jobs"] == months[LAST]["jobs"]


def test_crash_loops_need_a_gpu_attempt_that_ended_not_a_rates_exposure():
    """No GPU job ran, or none ended: no loop could have been seen, so the figure is not measured
    (not 0); two GPU jobs that ended on 0.9 node-days (too few for a rate) show whether they looped."""
    params = AnalysisConfig()
    none_ran = Exposure(frozenset({"sacct_psv"}), 0, 0.0, 0.0, 0, gpu_ended_attempts=0)
    none_ended = Exposure(frozenset({"sacct_psv"}), 3, 2.0, 0.0, 0, gpu_ended_attempts=0)
    two_ended = Exposure(frozenset({"sacct_psv"}), 2, 0.9, 0.0, 0, gpu_ended_attempts=2)
    assert unmeasured_codes(none_ran, params)["crash_loops"] == "no_gpu_jobs"
    assert unmeasured_codes(none_ended, params)["crash_loops"] == "no_gpu_attempt_ended"
    assert "crash_loops" not in unmeasured_codes(two_ended, params)


HOSTILE_NAME = "<script>alert(2)</script>\x1b[1m"  # a job's name is what its user typed


def test_the_pages_show_the_worst_jobs_as_inert_text_and_none_as_none():
    """The golden month (no loop: "no GPU job interrupted 3 times") and the same month with a loop
    whose job is named with markup and a terminal escape: shown as text, nowhere run."""
    metrics = json.loads((DATA_DIR / "golden" / "reports" / "month" / "metrics.json").read_text())
    del metrics["summary"]
    _, _, text = render_pages({}, month_document(metrics))
    assert "CRASH LOOPS: no GPU job interrupted 3 times or more" in text
    job = {
        **{"loop_rank": 1, "job_id": "4242", "job_name": HOSTILE_NAME, "account": "ml", "gpus": 16},
        **{"interruptions": 13, "failures": 2, "requeues": 10, "preemptions": 1, "gpu_hours": 40.0},
    }
    metrics["crash_loops"] |= {"jobs": 1, "interruptions": 13, "gpu_hours": 40.0, "worst": [job]}
    html, email, text = render_pages({}, month_document(metrics))
    shown = "<script>alert(2)</script>\\x1b[1m"  # the escape printed, not sent to the terminal
    assert f"4242 ({shown}, 16 GPUs): 2 failed, 10 requeued, 1 preempted" in text
    for page in (Page(html), Page(email)):
        assert page.is_inert() and any(shown in t for t in page.texts)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text + html + email)
