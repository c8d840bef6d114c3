"""Every chart is readable where the report shows it: no two texts overlap, no text leaves the figure,
no label on a plot covers one of its marks (a point, an error bar, a cap, a stem), and no text is
smaller than 10 px on a 375 px phone (flows/report/charts.py: a chart is drawn for
560 CSS px and scaled down to 343 px, so one layout serves both widths).

The charts are found in the chart modules (every `*_chart` function), so a new chart is covered
without a line here, and drawn for the periods the reports draw them for (render.MONTH_CHARTS,
render.STUDY_CHARTS): the demo month and the study (the golden metrics.json, a real build),
and thin variants of them made by editing those dicts (a month with a handful of GPU jobs, no
failure and no lemon signal; a month with lemon candidates; a study whose second cluster ran GPU
jobs in one month only and whose ETTR rows include CPU-only runs; a month whose 1,024-GPU jobs'
MTTF is observed beside the model's projection there). The archive's r_f chart, an SVG, is checked
in the browser (tests/test_publish_archive.py). Nothing here builds a month."""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import math
import re
from itertools import combinations
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter
from matplotlib.transforms import Bbox

import flows.report
from flows.figures.read import month_document, study_document
from flows.report import charts
from flows.report.charts import NARROWEST_PX, WIDTH_PX, Period, draw_charts, month_period, study_period
from flows.report.failure_charts import causes_by_month_chart, trend_chart
from flows.report.goodput_charts import lemon_signals_chart
from flows.report.render import MONTH_CHARTS, STUDY_CHARTS, build_report

GOLDEN = REPO_ROOT / "tests" / "data" / "golden" / "reports"
# the canvas and every flows/report/*_charts.py: a new chart module is covered without editing this test
CHART_MODULES = (
    charts,
    *(
        importlib.import_module(f"flows.report.{path.stem}")
        for path in sorted(Path(flows.report.__file__).parent.glob("*_charts.py"))
    ),
)
TOLERANCE_PX = 1.0  # in the PNG's pixels (2 per CSS px): anti-aliasing, not a collision


def chart_functions() -> dict[str, object]:
    """Every chart function the chart modules define: `*_chart` of a period."""
    return {
        name: function
        for module in CHART_MODULES
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if name.endswith("_chart")
        and function.__module__ == module.__name__
        and list(inspect.signature(function).parameters) == ["period"]
    }


def golden(kind: str) -> dict:
    return json.loads((GOLDEN / kind / "metrics.json").read_text())


def month_of(metrics: dict) -> Period:
    """The month's period, its metrics validated as the report's document (what its charts draw)."""
    return month_period(month_document(metrics))


def study_of(study: dict) -> Period:
    """The study's period, its figures validated as the study's document."""
    return study_period(study_document(study))


# the numbers a figure not measured keeps (its registry declaration's `keep`: what it was measured over)
KEPT = ("ckpt_minutes", "window_days")


def not_measured(figure: dict, reason: str) -> dict:
    """A dict figure as metrics.json writes one its inputs cannot support: its numbers null (but
    KEPT), the reason beside."""
    return {
        k: (None if isinstance(v, int | float) and not isinstance(v, bool) and k not in KEPT else v)
        for k, v in figure.items()
    } | {"not_measured": reason}


def thin_month() -> dict:
    """A mostly-CPU cluster's month: a handful of GPU jobs, no failure, no node or health source
    (no lemon signal, the fleet fault rate and the GPU figures not measured), two months built."""
    m = copy.deepcopy(golden("month"))
    thin = "2 GPU jobs on 10.2 GPU node-days: too little to measure a failure rate (100 needed)"
    m["totals"] |= {"attempts": 4285, "gpu_attempts": 2, "cpu_only_attempts": 4283, "gpu_node_days": 10.2,
                    "gpu_hours": 1958.4, "infra_failures": 0}  # fmt: skip
    m["job_mix"] = [
        {"outcome": "completed", "attempts": 3900, "attempt_share": 0.91, "gpu_hours": 1900.0, "gpu_hours_share": 0.97},
        {"outcome": "failed", "attempts": 385, "attempt_share": 0.09, "gpu_hours": 58.4, "gpu_hours_share": 0.03},
    ]
    m["mttf_by_size"] = []  # a list figure not measured: [] (the reason in the top-level map)
    m["projections"] = []
    m["failures_by_cause"] = []
    m["node_failure_rate"] = {k: not_measured(v, thin) for k, v in m["node_failure_rate"].items()}
    m["fleet_fault_rate"] = not_measured(m["fleet_fault_rate"], "no node-event or health source is configured")
    m["lost_goodput"] = not_measured(m["lost_goodput"], thin)
    m["ettr_vs_expected"] = not_measured(m["ettr_vs_expected"], thin) | {"all": [], "priority": []}
    m["expected_ettr"] = m["expected_ettr"] | {"curves": [], "r_f": None}
    monthly = m["history"]["monthly"][-2:]
    m["history"]["monthly"] = [row | {"all": not_measured(row["all"], thin), "paper": not_measured(row["paper"], thin)} for row in monthly]  # fmt: skip
    m["history"]["trailing"] = []
    lemons = m["lemon_nodes"]
    m["lemon_nodes"] = not_measured({k: v for k, v in lemons.items() if k != "trailing"}, "no health source") | {
        "candidates": [],
        "signal_distribution": {signal: [[0.0, 1.0]] for signal in lemons["signal_distribution"]},
    }
    return m


def quiet_month() -> dict:
    """A small GPU month that measured everything and saw nothing: no failure (MTTF lower bounds
    only, between 137 and 448 hours: within one decade), no lemon signal on any node."""
    m = copy.deepcopy(golden("month"))
    m["totals"] |= {"infra_failures": 0}
    m["mttf_by_size"] = [
        b | {"infra_failures": 0, "mttf_hours": None, "mttf_upper_hours": None, "model_mttf_hours": {"all": None, "paper": None}}
        for b in m["mttf_by_size"]
        if b["max_gpus"] in (1, 2)
    ]  # fmt: skip
    m["projections"] = []
    m["failures_by_cause"] = []
    m["node_failure_rate"] = {
        k: v | {"failures": 0, "value": 0.0, "lower": 0.0} for k, v in m["node_failure_rate"].items()
    }
    m["expected_ettr"] = m["expected_ettr"] | {"curves": []}
    lemons = m["lemon_nodes"]
    lemons["signal_distribution"] = {signal: [[0.0, 1.0]] for signal in lemons["signal_distribution"]}
    return m


def lemon_month() -> dict:
    """The demo month with lemon candidates: three far out on incident hours (two of them at the
    same value, two with long names), one a repeat offender, over a fleet of 400 nodes."""
    m = copy.deepcopy(golden("month"))
    names = ("rsc1-gpu-node-0007", "rsc1-gpu-node-0123", "rsc1-gpu-node-0399", "node12")
    evidence = [(38, 14, 6, 2, 3, 1, 0.5), (38, 9, 2, 0, 1, 0, 0.0), (36, 2, 1, 1, 0, 2, 1.0), (4, 0, 3, 0, 4, 0, 0.0)]
    m["lemon_nodes"]["candidates"] = [
        {
            "node": node, "rules": ["outlier"] if hours > 10 else ["repeat_offender"], "p_value": 1e-6 * (i + 1),
            "incident_p_value": 1e-6 * (i + 1), "repeat_p_value": 0.4, "incident_hours": hours, "xid_cnt": xids,
            "out_count": outs, "tickets": tickets, "failure_incidents": fails, "most_incidents_within_repeat_days": fails,
            "multi_node_node_fails": fails, "single_node_node_fails": single, "single_node_node_failure_rate": rate,
            "failures": [],
        }
        for i, (node, (hours, xids, outs, tickets, fails, single, rate)) in enumerate(zip(names, evidence, strict=True))
    ]  # fmt: skip
    m["lemon_nodes"] |= {"fleet_nodes": 400, "fleet_mean_incident_hours": 0.8, "fleet_incident_dispersion": 2.2}
    m["lemon_nodes"]["signal_distribution"] = {
        "incident_hours": [[0.0, 0.62], [1.0, 0.8], [2.0, 0.9], [3.0, 0.95], [4.0, 0.98], [6.0, 0.9925], [36.0, 0.995],
                           [38.0, 1.0]],
        "xid_cnt": [[0.0, 0.7], [1.0, 0.9], [2.0, 0.99], [9.0, 0.9975], [14.0, 1.0]],
        "out_count": [[0.0, 0.9], [1.0, 0.99], [2.0, 0.9925], [3.0, 0.9975], [6.0, 1.0]],
        "tickets": [[0.0, 0.99], [1.0, 0.9975], [2.0, 1.0]],
        "failure_incidents": [[0.0, 0.97], [1.0, 0.9925], [3.0, 0.9975], [4.0, 1.0]],
        "multi_node_node_fails": [[0.0, 0.97], [1.0, 0.9925], [3.0, 0.9975], [4.0, 1.0]],
        "single_node_node_fails": [[0.0, 0.99], [1.0, 0.9975], [2.0, 1.0]],
        "single_node_node_failure_rate": [[0.0, 0.99], [0.5, 0.9975], [1.0, 1.0]],
    }  # fmt: skip
    return m


def thin_study() -> dict:
    """The study with its second cluster thin: GPU jobs in the range's last month only (its
    month-by-month rows one), its GPU figures and lemons not measured, a CPU-only row (0 GPUs) left
    in its ETTR by size, and so no test between the clusters (ratios without intervals)."""
    s = copy.deepcopy(golden("study"))
    second = s["clusters"][list(s["clusters"])[1]]
    thin = "14 GPU jobs on 31.0 GPU node-days: too little to measure a failure rate (100 needed)"
    second["monthly"] = second["monthly"][-1:]
    second["ettr_vs_expected"]["priority"] = [
        {**second["ettr_vs_expected"]["priority"][0], "mean_gpus": 0.0, "expected_ettr": None}
    ]
    for figure in ("mttf_by_size", "projections", "failures_by_cause", "lost_goodput_by_size"):
        second[figure] = []
    second["node_failure_rate"] = {k: not_measured(v, thin) for k, v in second["node_failure_rate"].items()}
    second["expected_ettr_grid"] |= {"r_f": None, "curves": []}  # its r_f not measured
    second["lemon_nodes"] = not_measured(
        {k: v for k, v in second["lemon_nodes"].items() if k != "trailing"}, "none"
    ) | {
        "candidates": [],
        "signal_distribution": {},
    }
    for pair in s["comparison"]:
        pair["ratios"] = [r | {"ratio": None, "lower": None, "upper": None, "flagged": False} for r in pair["ratios"]]
    return s


def repair_month() -> dict:
    """The demo month with nine causes of node outages, from 1 repair (no interval) to 40, one
    of them 20 days long, and a node out for most of the month."""
    m = copy.deepcopy(golden("month"))
    causes = [
        ("gpu_unavailable", 40, 3.5), ("gpu_memory", 22, 30.0), ("gpu_nvlink", 9, 12.0), ("pcie", 6, 480.0),
        ("infiniband_link", 5, 2.0), ("filesystem_mount", 3, 0.5), ("gpu_driver_firmware", 2, 8.0),
        ("node_unresponsive", 1, 1.0), ("planned_maintenance", 12, 4.0),
    ]  # fmt: skip

    def summary(repairs: int, median: float) -> dict:
        interval = repairs >= 6
        return {
            "outages": repairs + 1, "repairs": repairs, "still_out": 1, "mean_hours": median * 1.3,
            "mean_lower_hours": median if interval else None, "mean_upper_hours": median * 2 if interval else None,
            "median_hours": median, "median_lower_hours": median / 2 if interval else None,
            "median_upper_hours": median * 1.8 if interval else None, "out_node_hours": repairs * median,
        }  # fmt: skip

    m["node_repairs"] = {
        "unit": "hours",
        "failures": summary(88, 6.0),
        "all": summary(100, 5.5),
        "by_cause": [{"category": c, "failure_domain": "hardware", "severity": "critical"} | summary(n, h) for c, n, h in causes],
        "availability": {"value": 0.9871, "out_node_hours": 3100.0, "fleet_node_hours": 240000.0},
        "nodes_out_longest": [{"node": "rsc1-gpu-node-0123", "outages": 2, "out_node_hours": 700.0,
                               "longest_outage_hours": 480.0, "longest_outage_category": "pcie"}],
    }  # fmt: skip
    return m


def large_job_month() -> dict:
    """The demo month with jobs of 512 and 1,024 GPUs that failed as the model expects: the observed
    MTTF of 1,024 GPUs (105 h, 55 to 210 h) beside the model's projection there (118 h)."""
    m = copy.deepcopy(golden("month"))
    last = m["mttf_by_size"][-1]
    m["mttf_by_size"] += [
        last | {"size_bucket": str(gpus), "min_gpus": gpus // 2 + 1, "max_gpus": gpus, "bucket_order": order,
                "infra_failures": failures, "runtime_hours": hours * failures, "mttf_hours": hours,
                "mttf_lower_hours": hours / 1.9, "mttf_upper_hours": hours * 2,
                "model_mttf_hours": {"all": 82.0 * 1024 / gpus, "paper": 118.0 * 1024 / gpus}}
        for gpus, order, failures, hours in ((512, 10, 8, 240.0), (1024, 11, 11, 105.0))
    ]  # fmt: skip
    return m


MONTHS = {"demo month": lambda: golden("month"), "thin month": thin_month, "quiet month": quiet_month}
STUDIES = {"study": lambda: golden("study"), "thin study": thin_study}
# drawn by their own subject's chart only
EXTRA = {"lemon month": lemon_month, "repair month": repair_month, "large-job month": large_job_month}
EXTRA_CASES = [
    ("lemon_signals_chart", "lemon month"),
    ("repair_chart", "repair month"),
    ("mttf_chart", "large-job month"),
]


def cases() -> list:
    """(chart function, period name) for every chart and every period its report draws it for."""
    return [
        pytest.param(name, period, id=f"{name}-{period}")
        for name, function in sorted(chart_functions().items())
        for group, periods in ((MONTH_CHARTS, MONTHS), (STUDY_CHARTS, STUDIES))
        if function in group
        for period in periods
    ] + [pytest.param(name, period, id=f"{name}-{period}") for name, period in EXTRA_CASES]


def period_of(name: str):
    months = MONTHS | EXTRA
    return month_of(months[name]()) if name in months else study_of(STUDIES[name]())


def drawn_texts(fig: Figure) -> list[Text]:
    """The texts the figure draws: titles, axis labels, the tick labels drawn (those in view),
    legends, annotations, each non-empty and visible, with every container it is in visible."""
    axes = [(ax, axis) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)]
    # the ticks in view, as the last draw placed them (this may add tick objects: before listing them all)
    drawn_ticks = [
        label
        for ax, axis in axes
        if ax.get_visible() and axis.get_visible()
        for tick in axis._update_ticks()
        for label in (tick.label1, tick.label2)
    ]
    tick_labels = {
        id(label) for _, axis in axes for t in axis.majorTicks + axis.minorTicks for label in (t.label1, t.label2)
    }

    def shown(text: Text) -> bool:
        if not (text.get_visible() and text.get_text().strip()):
            return False
        if text.axes is not None and not text.axes.get_visible():
            return False
        return not any(legend.get_texts().count(text) and not legend.get_visible() for legend in fig.legends)

    others = [t for t in fig.findobj(Text) if id(t) not in tick_labels]
    return [t for t in drawn_ticks + others if shown(t)]


def drawn_marks(ax) -> list[tuple[str, Bbox]]:
    """The marks an axes draws, in the PNG's pixels: each marker of its lines (a point, a square, a
    diamond, an error bar's cap) as a box of its size, and each segment of its error bars and stems
    (line collections) as a box of its stroke. Lines without markers (a model, a grid) are no mark."""
    dpi = ax.figure.dpi
    marks = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_marker() in (None, "None", "", " ") or not line.get_markersize():
            continue
        half = (line.get_markersize() + line.get_markeredgewidth()) * dpi / 72 / 2  # its outline included
        for x, y in line.get_transform().transform(line.get_xydata()):
            if math.isfinite(x) and math.isfinite(y) and ax.bbox.contains(x, y):
                marks.append((f"{line.get_label()} marker", Bbox.from_extents(x - half, y - half, x + half, y + half)))
    for collection in ax.collections:
        if not (isinstance(collection, LineCollection) and collection.get_visible()):
            continue
        width = max([*collection.get_linewidths(), 1.0]) * dpi / 72 / 2
        for segment in collection.get_segments():
            points = collection.get_transform().transform(segment)
            box = Bbox.from_extents(*points.min(axis=0), *points.max(axis=0)).padded(width)
            marks.append((f"{collection.get_label()} bar", Bbox.intersection(box, ax.bbox) or box))
    return marks


def layout_problems(fig: Figure) -> list[str]:
    """Each pair of texts that overlap, each text that leaves the figure and each text on a plot that
    covers one of its marks (a label on a point or an error bar), in words (the figure drawn)."""
    renderer = fig.canvas.get_renderer()
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in drawn_texts(fig)]
    covered = [
        f"{text.get_text()!r} covers {name}"
        for ax in fig.axes
        if ax.get_visible()
        for text in ax.texts
        if text.get_visible() and text.get_text().strip()
        for name, mark in drawn_marks(ax)
        # a label clear of the marks by a pixel, not touching them
        if (both := Bbox.intersection(text.get_window_extent(renderer).padded(TOLERANCE_PX), mark)) is not None
        and min(both.width, both.height) > 0
    ]
    whole = fig.bbox.padded(TOLERANCE_PX)
    problems = [
        f"{text!r} leaves the figure ({box.x0:.0f}, {box.y0:.0f}, {box.x1:.0f}, {box.y1:.0f} in {whole.bounds})"
        for text, box in boxes
        if not (whole.contains(box.x0, box.y0) and whole.contains(box.x1, box.y1))
    ]
    for ax in (ax for ax in fig.axes if ax.get_visible()):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            values = [t.label1.get_text() for t in axis._update_ticks() if t.label1.get_text().strip()]
            # a scale needs two values to be read (categories, set by name, need one)
            if not isinstance(axis.get_major_formatter(), FixedFormatter) and len(values) < 2:
                problems.append(f"{ax.get_title(loc='left') or ax.get_title()!r}: its {name} axis labels {values}")
    for (a, box_a), (b, box_b) in combinations(boxes, 2):
        both = Bbox.intersection(box_a, box_b)
        if both is not None and both.width > TOLERANCE_PX and both.height > TOLERANCE_PX:
            problems.append(f"{a!r} overlaps {b!r}")
    return problems + covered


@pytest.fixture
def figures(monkeypatch) -> list[Figure]:
    """The figures the charts draw, each drawn as its PNG would be (without encoding it), with its
    layout problems found there, in the charts' style (`fig.layout_problems`): the tick labels
    depend on it (how many fit an axis)."""
    found: list[Figure] = []

    def drawn(fig: Figure) -> bytes:
        FigureCanvasAgg(fig).draw()
        fig.layout_problems = layout_problems(fig)
        fig.drawn_texts = [text.get_text() for text in drawn_texts(fig)]
        found.append(fig)
        return b""

    monkeypatch.setattr(charts, "_png", drawn)
    return found


def test_every_chart_function_is_drawn_by_a_report() -> None:
    """A chart function no report draws is not checked by the periods below: wire it into one."""
    assert chart_functions()
    assert set(chart_functions()) <= {f.__name__ for f in (*MONTH_CHARTS, *STUDY_CHARTS)}


@pytest.mark.parametrize(("chart", "period"), cases())
def test_no_text_overlaps_or_leaves_the_chart(chart, period, figures) -> None:
    drawn = draw_charts([chart_functions()[chart]], period_of(period))
    assert len(figures) == len(drawn)
    for fig, shown in zip(figures, drawn.values(), strict=True):
        assert fig.layout_problems == [], shown.name
        # the smallest text at least 10 px on a phone (343 px of 560)
        assert shown.min_text_px * NARROWEST_PX / (2 * WIDTH_PX) >= 10, (shown.name, shown.min_text_px)


def test_the_lemon_chart_says_which_nodes_stand_out_on_which_signal_against_which_threshold(figures) -> None:
    metrics = lemon_month()
    chart = draw_charts([lemon_signals_chart], month_of(metrics))["lemon_signals"]
    (fig,) = figures
    texts = fig.drawn_texts
    # titles in words, never a column's name
    assert not [t for t in texts if "_" in t]
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "Hours in incidents",
        "Hardware Xid errors",
        "Drains and downs",
        "Repair tickets",
        "Multi-node job failures it caused",
        "Single-node job failures it caused",
        "Share of its single-node jobs that failed",
    ]
    # the threshold in the legend, where the fit puts it (the candidates at 36 and 38 hours above it)
    assert "outlier threshold: 10 hours (p < 0.001)" in texts
    # each candidate named in the legend with its rules, and lettered on the panels where it stands out
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:2] == ["nodes with the value", "outlier threshold: 10 hours (p < 0.001)"]
    assert legend[2:] == [
        "rsc1-gpu-node-0007: outlier",
        "rsc1-gpu-node-0123: outlier",
        "rsc1-gpu-node-0399: outlier",
        "node12: repeat offender",
    ]
    hours = fig.axes[0]
    assert sorted(t.get_text() for t in hours.texts) == ["A B", "C", "D"]
    assert "A rsc1-gpu-node-0007 (outlier): 38 hours in incidents" in chart.alt


def test_a_month_without_lemon_signals_says_so_instead_of_empty_panels(figures) -> None:
    quiet = quiet_month()
    assert lemon_signals_chart(month_of(quiet)) is None and figures == []
    report = build_report(quiet)
    assert "lemon_signals" not in report.charts
    sentence = "No node had a lemon signal in the 28 days to 2026-11-01 00:00"
    assert all(
        sentence in html.replace("&nbsp;", " ").replace("\xa0", " ") for html in (report.html, report.email_html)
    )
    # a month that did not measure its lemons says why (flows/figures/measured.py), not this
    assert lemon_signals_chart(month_of(thin_month())) is None


@pytest.mark.parametrize("chart", [trend_chart, causes_by_month_chart])
def test_the_study_labels_every_month_of_its_range(chart, figures) -> None:
    """The second cluster ran GPU jobs in the range's last month only: every month still has its label."""
    study = thin_study()
    draw_charts([chart], study_of(study))
    (fig,) = figures
    labels = [t.get_text().split("\n")[0] for t in fig.axes[-1].get_xticklabels()]
    assert labels == ["Nov", "Dec", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct"]


def test_a_study_names_only_the_clusters_a_chart_draws(figures) -> None:
    """The thin study's second cluster: its only highest-priority ETTR row is CPU-only runs (0 GPUs,
    off the log axis), and it has no failure, MTTF, lost goodput, E[ETTR] or lemon figure. Its
    name is in no legend, panel title or alt text of those charts."""
    first, second = thin_study()["clusters"]
    drawn = draw_charts(STUDY_CHARTS, study_of(thin_study()))
    for fig, chart in zip(figures, drawn.values(), strict=True):
        if chart.name in ("causes", "mttf", "ettr", "lost_goodput", "expected_ettr", "lemon_signals"):
            names = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
            names += [ax.get_title(loc="left") for ax in fig.axes]
            assert [n for n in names if second in n] == [] and first in " ".join(names), chart.name
            assert f"{second}:" not in chart.alt and f"{second} " not in chart.alt, chart.name


def test_the_repair_chart_draws_what_its_legend_says(figures) -> None:
    """A whisker for each cause of at least 6 repairs (the 95% interval the legend names), and for
    the causes of fewer, an open mark without one, named in the legend as too few to bound."""
    from flows.report.repair_charts import repair_chart

    metrics = repair_month()
    draw_charts([repair_chart], month_of(metrics))
    (fig,) = figures
    ax = fig.axes[0]
    causes = metrics["node_repairs"]["by_cause"]
    bounded = [c for c in causes if c["median_lower_hours"] is not None]
    whiskers = [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]
    assert len(whiskers) == len(bounded) == 5  # one whisker per bounded cause, none of no length
    assert all(abs(s[1][0] - s[0][0]) > 0 for s in whiskers)
    open_marks = [
        point for line in ax.get_lines() if line.get_markerfacecolor() == "white" for point in line.get_xydata()
    ]
    assert len(open_marks) == len(causes) - len(bounded) == 4
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(legend) == sorted([f"{metrics['cluster']}, 95% interval", "under 6 repairs: too few to bound"])


def test_the_repair_table_says_too_few_repairs_to_bound_where_it_has_no_interval(monkeypatch) -> None:
    # the table's text alone: without its charts the page is the same but for their <img> tags (whose
    # alt texts hold no "too few repairs to bound"), and drawing them is ~8 of this test's 8 s
    monkeypatch.setattr("flows.report.render.render_charts", lambda metrics: {})
    report = build_report(repair_month())
    table = report.html[report.html.index("<h2>Node repair time") :]
    rows = {re.search(r"<td>([^<]*)</td>", row)[1]: row for row in table.split("<tr>")[2:11]}
    assert "too few repairs to bound" in rows["filesystem mount"]  # 3 repairs
    assert "too few repairs to bound" not in rows["gpu nvlink"]  # 9 repairs
    assert table.count("too few repairs to bound") == 2 * 4  # the median and the mean of the 4 causes under 6
