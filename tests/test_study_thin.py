"""A study whose clusters are not alike (issue 42): one cluster measured, the other a mostly-CPU site
with only job records, GPU jobs in fewer months and in fewer size buckets. Rendered through the
study renderer (flows/report/study_report.py, charts included) from the golden study with its second
cluster made thin as flows/figures/measured.py writes one; the side-by-side tables are joined by month
and size bucket (flows/figures/side_by_side.py `side_by_side`), never by a row's position. Nothing
here builds a month."""

from __future__ import annotations

import json
import re

from conftest import DATA_DIR

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.document import figures_of
from flows.figures.measured import exposure, not_measured, write_unmeasured
from flows.figures.models import expected_ettr_grid
from flows.figures.side_by_side import paper_job_mix_shape, side_by_side
from flows.figures.study_metrics import assemble_study
from flows.report.study_report import render_study

GOLDEN = DATA_DIR / "golden" / "reports" / "study" / "metrics.json"
PARAMS = AnalysisConfig()
NO_NODE_SOURCE = "no node-event or health source was configured"


def job_mix(figures: dict, sizes: int | None = None) -> list[dict]:
    """The job mix by size (attempts and GPU-hours of each bucket), from the golden MTTF-by-size rows."""
    rows = [
        {k: r[k] for k in ("size_bucket", "bucket_order", "attempts", "gpu_hours")}
        for r in figures["mttf_by_size"]
        if r["size_bucket"] != "0"  # GPU attempts only (the golden study predates issue 42)
    ]
    return rows[:sizes] if sizes is not None else rows


def thin_study() -> dict:
    """The golden study with rsc2 thin: only job records, 14 GPU jobs of 1-2 GPUs in the last two
    months (the others have no row), too few GPU node-days for any GPU figure."""
    study = json.loads(GOLDEN.read_text())
    clusters = study["clusters"]
    for figures in clusters.values():
        figures["job_mix_by_size"] = job_mix(figures)
    rsc2 = clusters["rsc2"]
    rsc2["job_mix_by_size"] = [r | {"attempts": 7, "gpu_hours": 400.0} for r in job_mix(rsc2, 2)]
    rsc2["monthly"] = rsc2["monthly"][-2:]
    rsc2["node_failure_rate"]["all"] |= {"node_days": 31.0, "failures": 0}
    rsc2["node_failure_rate"]["paper"] |= {"node_days": 0.0, "failures": 0}
    rsc2["totals"] |= {"gpu_attempts": 14, "cpu_only_attempts": 3858}
    gaps = not_measured(exposure({"sacct_xdmod"}, rsc2["totals"], rsc2["node_failure_rate"], "in the range"), PARAMS)
    rsc2 = write_unmeasured(rsc2, gaps) | {"lost_goodput_by_size": []}
    rsc2["expected_ettr_grid"] = expected_ettr_grid(rsc2["node_failure_rate"], PARAMS)
    rsc2["monthly"] = [m | {"all": m["all"] | {"value": None, "lower": None, "upper": None,
                                                "not_measured": f"too little GPU exposure in {m['month']}"}}
                       for m in rsc2["monthly"]]  # fmt: skip
    clusters["rsc1"]["not_measured"], clusters["rsc2"] = {}, rsc2
    months = [Month.parse(study["from_month"]), Month.parse(study["to_month"])]
    return json.loads(json.dumps(assemble_study(clusters, months, study["reproduce"]["command"])))


def text_of(html: str) -> str:
    """The page's words (a no-break space, between a number and its unit, as a space)."""
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html, flags=re.S)).replace("&nbsp;", " ")
    return re.sub(r"\s+", " ", text)


def test_the_side_by_side_tables_join_the_clusters_by_month_and_size():
    rows = side_by_side(thin_study()["clusters"])
    months = [m["month"] for m in rows["monthly"]]
    assert months == sorted(months) and len(months) == 12  # every month either cluster has
    first = rows["monthly"][0]["clusters"]
    assert first["rsc1"]["value"] is not None
    assert first["rsc2"] == {"value": None, "lower": None, "upper": None, "not_measured": "no GPU node-days in 2025-11"}
    last = rows["monthly"][-1]
    assert (
        last["month"] == "2026-10" and last["clusters"]["rsc2"]["not_measured"] == "too little GPU exposure in 2026-10"
    )
    sizes = rows["job_mix_by_size"]
    assert [b["size_bucket"] for b in sizes][:2] == ["1", "2"] and len(sizes) > 2
    assert sizes[0]["clusters"]["rsc2"] == {"attempts": 7, "gpu_hours": 400.0}
    assert sizes[-1]["clusters"]["rsc2"] == {"attempts": 0, "gpu_hours": 0}  # ran none there: a count, not unknown


def test_a_cluster_with_no_gpu_attempts_is_a_column_of_zeros_not_a_crash():
    study = thin_study()
    study["clusters"]["rsc2"]["job_mix_by_size"] = []
    rows = side_by_side(study["clusters"])
    assert all(b["clusters"]["rsc2"] == {"attempts": 0, "gpu_hours": 0} for b in rows["job_mix_by_size"])


def test_a_thin_study_renders_and_says_not_measured_per_cluster():
    study = thin_study()
    study["clusters"]["rsc2"]["job_mix_by_size"] = []  # no attempt of any size: the template's old crash
    report = render_study(study)
    html, text = text_of(report.html), report.text
    assert (
        "rsc2: r_f not measured: 14 GPU jobs on 31.0 GPU node-days in the range"
        in figures_of(report.document)["summary"]["text"]
    )
    for section in ("MTTF by job size", "Failures by cause", "Lemon-node candidates", "Lost goodput"):
        assert re.search(f"{section}.{{0,400}}rsc2: not measured:", html), section
    assert re.search(r"2025-11 [\d.]+ [\d.]+ – [\d.]+ not measured no GPU node-days in 2025-11", html)
    assert f"Node faults over the fleet: not measured: {NO_NODE_SOURCE}" in text
    assert "rsc2 r_f (all) not measured" in html
    assert "list object" not in html and "Undefined" not in html
    assert re.search(r"rsc2: not measured: .{0,400} rsc1 No node stood out in the 365 days to 2026-11-01 00:00", html)
    assert "– days" not in html


def test_a_study_with_no_rate_measured_says_why_it_has_no_trend_chart():
    study = thin_study()
    rsc1 = study["clusters"]["rsc1"]
    rsc1["monthly"] = [m | {"all": m["all"] | {"value": None, "not_measured": "too little"}} for m in rsc1["monthly"]]
    assert side_by_side(study["clusters"])["trend_measured"] is False  # joined when read
    html = text_of(render_study(study).html)
    assert "No trend chart: no cluster's r f is measured in any month of the range" in html


def cpu_only(figures: dict) -> dict:
    """A cluster's study figures as a CPU-only cluster with only job records has them (Open XDMoD's dumps)."""
    figures["node_failure_rate"]["all"] |= {"node_days": 0.0, "failures": 0}
    figures["node_failure_rate"]["paper"] |= {"node_days": 0.0, "failures": 0}
    figures["totals"] |= {"gpu_attempts": 0, "cpu_only_attempts": figures["totals"]["attempts"], "gpu_hours": 0.0}
    gaps = not_measured(exposure({"sacct_xdmod"}, figures["totals"], figures["node_failure_rate"], "in the range"), PARAMS)  # fmt: skip
    figures = write_unmeasured(figures, gaps) | {"lost_goodput_by_size": [], "job_mix_by_size": [], "job_mix": []}
    figures["expected_ettr_grid"] = expected_ettr_grid(figures["node_failure_rate"], PARAMS)
    figures["monthly"] = [m | {"all": m["all"] | {"value": None, "not_measured": "no GPU job ran"}} for m in figures["monthly"]]  # fmt: skip
    return figures


def cpu_only_study() -> dict:
    """The golden study with both clusters CPU-only, with only job records."""
    study = json.loads(GOLDEN.read_text())
    clusters = {name: cpu_only(figures) for name, figures in study["clusters"].items()}
    months = [Month.parse(study["from_month"]), Month.parse(study["to_month"])]
    return json.loads(json.dumps(assemble_study(clusters, months, study["reproduce"]["command"])))


def test_a_study_of_cpu_only_clusters_has_no_tables_of_not_measured():
    study = cpu_only_study()
    assert set(side_by_side(study["clusters"])["unmeasured_everywhere"]) >= {
        "mttf_by_size",
        "breakdowns",
        "lemon_nodes",
    }
    report = render_study(study)
    html = text_of(report.html)
    # no GPU attempt in the range: its count of infrastructure failures is not measured, in every output
    for figures in figures_of(report.document)["clusters"].values():
        assert figures["totals"]["infra_failures"] is None
        assert figures["not_measured"]["totals.infra_failures"] == "no GPU job ran in the range"
    assert "Infrastructure failures not measured no GPU job ran in the range" in html
    assert report.text.count("infrastructure failures not measured: no GPU job ran in the range") == 2
    for name, attempts in (("rsc1", "83,213"), ("rsc2", "80,491")):
        said = f"{name}: No GPU job attempt in the range: the job mix is of GPU attempts, and the range's {attempts} attempts were CPU-only."
        assert said in html
    for table in ("Accounts by lost GPU-hours", "The fitted r f and the projected MTTF", "observed MTTF, 95%",
                  "Nodes in the fleet", "attempts; GPU-hours"):  # fmt: skip
        assert table not in html, table
    for section in ("MTTF by job size", "By account and partition"):
        assert re.search(f"{section} .{{0,200}}rsc1: not measured: no GPU job ran in the range", html), section
    assert re.search(
        "Lemon-node candidates .{0,200}rsc1: not measured: no node-event or health source was configured", html
    )


def tables_without_rows(html: str) -> list[str]:
    """The header of each table of the page that has no row of data under it."""
    tables = re.findall(r"<table[^>]*>(.*?)</table>", html, flags=re.S)
    return [text_of(t.split("</tr>")[0]).strip() for t in tables if "<td" not in t]


def test_the_papers_job_mix_shape_is_claimed_only_where_the_attempts_show_it():
    """rsc2 ran 14 GPU attempts: "most attempts are small, most GPU-hours are in large jobs" is no
    claim to make of them (the golden study's clusters, tens of thousands each, have that shape)."""
    claim = "As in the paper's Fig. 3, most attempts are small and most GPU-hours are in large jobs."
    golden = json.loads(GOLDEN.read_text())
    assert paper_job_mix_shape(side_by_side(golden["clusters"])["job_mix_by_size"])
    study = thin_study()
    assert not paper_job_mix_shape(side_by_side(study["clusters"])["job_mix_by_size"])
    html = text_of(render_study(study).html)
    assert "The chart stacks each outcome's share" in html and "Fig. 3: most attempts" not in html
    assert claim not in html and "most GPU-hours are in large jobs" not in html


def test_no_table_is_a_header_without_rows():
    """A study where no cluster lost GPU-hours by size (rsc1 lost none in any bucket, rsc2's not
    measured) has no lost-goodput table, nor any other table of a header alone; nor a CPU-only study."""
    study = thin_study()
    study["clusters"]["rsc1"]["lost_goodput_by_size"] = []
    assert side_by_side(study["clusters"])["lost_goodput_by_size"] == []  # joined when read
    assert tables_without_rows(render_study(study).html) == []
    golden = json.loads(GOLDEN.read_text())
    clusters = {name: cpu_only(figures) for name, figures in golden["clusters"].items()}
    months = [Month.parse(golden["from_month"]), Month.parse(golden["to_month"])]
    cpu = json.loads(json.dumps(assemble_study(clusters, months, golden["reproduce"]["command"])))
    assert tables_without_rows(render_study(cpu).html) == []
