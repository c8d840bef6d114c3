"""Every figure of a period, declared once (flows/figures/figure.py `Figure`): what a month's report
and a study both show of a cluster's period, in the order the pages show their sections.

Derived from FIGURES, and nowhere else listed: the period's document class (`PeriodFigures`), the
figures' measurability rules (flows/figures/measured.py), a correction's names of them
(flows/delivery/fingerprint.py), their Prometheus series (flows/report/openmetrics.py), their
sections of the HTML and text pages (`page_sections`), and their Grafana panels (checked by
tests/test_figure_registry.py). A new figure is a module with its type, its reader and its
declaration, one line here, its mart, its partial, its documentation and its simulator truth.
"""

from __future__ import annotations

from flows.figures import crash_loops, failure_times, repair
from flows.figures.figure import Figure, Reading, Series
from flows.figures.figure_types import (
    Breakdowns,
    CauseFigure,
    EttrVsExpected,
    FleetFaultRate,
    LemonNodes,
    LostGoodput,
    MttfBucket,
    NodeFailureRate,
    Projection,
    Totals,
)
from flows.figures.lemons import LEMON_KEEP, lemon_candidates, unmeasured_lemons
from flows.figures.models import projections
from flows.figures.period import (
    BREAKDOWNS,
    ETTR_BY_SIZE,
    EXPOSURE,
    FAILURES_BY_CAUSE,
    LOST_GOODPUT,
    MTTF_BY_SIZE,
    RATE_KEEP,
    TOTALS,
    breakdowns,
    ettr_vs_expected,
    failures_by_cause,
    fleet_fault_rate,
    lost_goodput,
    mttf_by_size,
    unmeasured_breakdowns,
    unmeasured_rates,
)
from flows.figures.samples import (
    DEFINITIONS,
    ettr_samples,
    hours,
    lemon_count_samples,
    mttf_samples,
    rate_samples,
)

FIGURES: tuple[Figure, ...] = (
    Figure(
        "totals",
        "totals",
        Totals,
        lambda r: r.totals,
        "the period's attempts, GPU-hours, node-days and infrastructure failures",
        named={"totals.infra_failures": "infrastructure failures"},
        marts=(TOTALS.table,),
        parts={"infra_failures": ("gpu_attempt_ended",)},
        # a count of the totals not measured is null, the others stay
        unmeasured=lambda totals, _why, gaps: (
            totals | {p.split(".", 1)[1]: None for p in gaps if p.startswith("totals.")}
        ),
        series=(
            Series(
                "job_attempts",
                "Job attempts of the month",
                (),
                lambda m: [((), m.totals.attempts)],
                ("totals.attempts",),
            ),
            Series(
                "gpu_seconds",
                "GPU time of the month's attempts",
                (),
                lambda m: [((), hours(m.totals.gpu_hours))],
                ("totals.gpu_hours",),
            ),
            Series(
                "infrastructure_failures",
                "Job attempts ended by an infrastructure failure in the month",
                (),
                lambda m: [((), m.totals.infra_failures)],
                ("totals.infra_failures",),
            ),
        ),
    ),
    Figure(
        "node_failure_rate",
        "node failure rate",
        NodeFailureRate,
        lambda r: r.r_f,
        "r_f, infrastructure failures per 1000 node-days, under the paper's definition and every GPU job's",
        named={
            "node_failure_rate.paper": "the paper's node failure rate",
            "node_failure_rate.all": "the node failure rate",
        },
        marts=(EXPOSURE.table,),
        parts={"paper": ("paper_exposure",), "all": ("gpu_exposure",)},
        keep=RATE_KEEP,
        unmeasured=lambda r_f, _why, gaps: unmeasured_rates(r_f, gaps),
        series=(
            Series(
                "node_failure_rate",
                "Node failure rate r_f, failures per 1000 node-days; definition: paper (jobs above "
                "paper_min_gpus) or all",
                ("definition",),
                rate_samples("value"),
                ("node_failure_rate.{definition}",),
            ),
            Series(
                "node_failure_rate_lower",
                "Lower bound of r_f's exact Poisson 95% interval, failures per 1000 node-days",
                ("definition",),
                rate_samples("lower"),
                ("node_failure_rate.{definition}",),
            ),
            Series(
                "node_failure_rate_upper",
                "Upper bound of r_f's exact Poisson 95% interval, failures per 1000 node-days",
                ("definition",),
                rate_samples("upper"),
                ("node_failure_rate.{definition}",),
            ),
        ),
        panel="Node failure rate r_f",
    ),
    Figure(
        "fleet_fault_rate",
        "fleet fault rate",
        FleetFaultRate,
        lambda r: fleet_fault_rate(r.con, r.period),
        "node faults per 1000 node-days over every GPU node, busy or idle",
        named={"fleet_fault_rate": "the fleet's node fault rate"},
        marts=(EXPOSURE.table,),
        needs=("node_source",),
        keep=("unit", "definition", "nodes", "node_days"),
    ),
    Figure(
        "mttf_by_size",
        "MTTF by job size",
        list[MttfBucket],
        lambda r: mttf_by_size(r.buckets, r.r_f, r.params.gpus_per_node),
        "observed mean time to failure per job-size bucket, beside the paper's model",
        marts=(MTTF_BY_SIZE.table,),
        needs=("gpu_exposure",),
        section="mttf",
        charts=("mttf",),
        series=(
            Series(
                "mttf_seconds",
                "Observed mean time to failure of jobs of this size (size_gpus: the bucket's largest size)",
                ("size_gpus",),
                mttf_samples("mttf_hours"),
                ("mttf_by_size",),
            ),
            Series(
                "mttf_lower_seconds",
                "Lower bound of the observed MTTF's 95% interval (with no failure: the MTTF is at least this)",
                ("size_gpus",),
                mttf_samples("mttf_lower_hours"),
                ("mttf_by_size",),
            ),
            Series(
                "mttf_upper_seconds",
                "Upper bound of the observed MTTF's 95% interval",
                ("size_gpus",),
                mttf_samples("mttf_upper_hours"),
                ("mttf_by_size",),
            ),
            Series(
                "model_mttf_seconds",
                "The paper's model MTTF of jobs of this size: 1 / ((GPUs / GPUs per node) x r_f of the definition)",
                ("size_gpus", "definition"),
                lambda m: [
                    ((b.size_bucket, d), hours(getattr(b.model_mttf_hours, d)))
                    for b in m.mttf_by_size
                    for d in DEFINITIONS
                ],
                ("mttf_by_size", "node_failure_rate.{definition}"),
            ),
        ),
        panel="MTTF by job size",
    ),
    Figure(
        "projections",
        "projections to large jobs",
        list[Projection],
        lambda r: projections(r.r_f, r.params),
        "the model's MTTF at the configured job sizes under each r_f",
        named={"projections": "the projected MTTF"},
        needs=("gpu_exposure",),
    ),
    Figure(
        "failures_by_cause",
        "failures by cause",
        list[CauseFigure],
        lambda r: failures_by_cause(r.con, r.period),
        "infrastructure failures by cause, each with its rate per 1000 node-days",
        marts=(FAILURES_BY_CAUSE.table,),
        needs=("node_source", "gpu_exposure"),
        section="causes",
        charts=("causes",),
        series=(
            Series(
                "cause_failures",
                "Infrastructure failures of the month attributed to this cause",
                ("cause",),
                lambda m: [((c.category,), c.failures) for c in m.failures_by_cause],
                ("failures_by_cause",),
            ),
        ),
        panel="Infrastructure failures by cause",
    ),
    Figure(
        "ettr_vs_expected",
        "ETTR against expected",
        EttrVsExpected,
        lambda r: ettr_vs_expected(r.con, r.period, r.r_f, r.params),
        "the ETTR of the long job runs that ended in the period, by size, beside E[ETTR]",
        named={"ettr_vs_expected": "ETTR"},
        marts=(ETTR_BY_SIZE.table,),
        needs=("gpu_exposure",),
        keep=("r_f_definition", "ckpt_minutes", "min_run_hours"),
        section="ettr",
        charts=(
            "ettr",
            "expected_ettr",
        ),
        series=(
            Series(
                "ettr_ratio",
                "Mean ETTR of the long job runs of this size that ended in the month (run_set: priority or all)",
                ("size_gpus", "run_set"),
                ettr_samples("mean_ettr"),
                ("ettr_vs_expected",),
            ),
            Series(
                "expected_ettr_ratio",
                "E[ETTR] of the paper's model at those runs' mean size",
                ("size_gpus", "run_set"),
                ettr_samples("expected_ettr"),
                ("ettr_vs_expected",),
            ),
            Series(
                "ettr_job_runs",
                "Long job runs behind the ETTR figure",
                ("size_gpus", "run_set"),
                ettr_samples("runs"),
                ("ettr_vs_expected",),
            ),
        ),
        panel="ETTR of long job runs",
    ),
    Figure(
        "lost_goodput",
        "lost goodput",
        LostGoodput,
        lambda r: lost_goodput(r.con, r.period, r.params),
        "the GPU-hours the period's infrastructure failures cost",
        marts=(LOST_GOODPUT.table,),
        needs=("gpu_exposure",),
        keep=("estimator",),
        section="lost_goodput",
        charts=("lost_goodput",),
        series=(
            Series(
                "lost_gpu_seconds",
                "Lost goodput, GPU time: order first (failed attempts) or second (attempts preempted for a restart)",
                ("order",),
                lambda m: [
                    (("first",), hours(m.lost_goodput.first_order_gpu_hours)),
                    (("second",), hours(m.lost_goodput.second_order_gpu_hours)),
                ],
                ("lost_goodput",),
            ),
            Series(
                "lost_goodput_ratio",
                "Lost GPU time as a share of the month's GPU time",
                (),
                lambda m: [((), m.lost_goodput.share_of_gpu_hours)],
                ("lost_goodput",),
            ),
        ),
        panel="Lost goodput",
    ),
    Figure(
        "breakdowns",
        "breakdowns",
        Breakdowns,
        lambda r: breakdowns(r.con, r.period, r.params.breakdown_top),
        "infrastructure failures, lost GPU-hours and ETTR by account and by partition",
        named={"breakdowns": "the accounts' and partitions' losses"},
        marts=(BREAKDOWNS.table,),
        needs=("gpu_exposure",),
        keep=("top",),
        unmeasured=unmeasured_breakdowns,
        section="breakdowns",
    ),
    Figure(
        "lemon_nodes",
        "lemon-node candidates",
        LemonNodes,
        lambda r: lemon_candidates(r.con, r.period, r.params),
        "nodes that fail far more often than the fleet explains",
        marts=(
            "fct_node_lemon_signals",
            "fct_period_lemon_fleet",
            "fct_period_lemon_signal_distribution",
        ),
        needs=("node_source_or_failures",),
        keep=LEMON_KEEP,
        unmeasured=unmeasured_lemons,
        section="lemons",
        charts=("lemon_signals",),
        series=(
            Series(
                "lemon_candidates",
                "Lemon-node candidates at the month's end",
                (),
                lemon_count_samples,
                ("lemon_nodes",),
            ),
            Series(
                "lemon_candidate_p_value",
                "A lemon-node candidate and the p-value of its signals (the smaller, the less the fleet explains it)",
                ("node",),
                lambda m: [((c.node,), c.p_value) for c in m.lemon_nodes.candidates],
                ("lemon_nodes",),
            ),
        ),
        panel="Lemon-node candidates",
    ),
    repair.FIGURE,
    failure_times.FIGURE,
    crash_loops.FIGURE,
)


def needs() -> dict[str, tuple[str, ...]]:
    """Each figure path a rule covers (`key`, or `key.part`) -> the rules it needs, in FIGURES' order."""
    return {
        path: figure.parts.get(path.removeprefix(f"{figure.key}."), figure.needs)
        for figure in FIGURES
        for path in _paths(figure)
    }


def sentence_names() -> dict[str, str]:
    """Each figure path a rule covers -> how a sentence of the report names it, in FIGURES' order."""
    return {path: figure.named.get(path, figure.words) for figure in FIGURES for path in _paths(figure)}


def _paths(figure: Figure) -> list[str]:
    return [f"{figure.key}.{part}" for part in figure.parts] + ([figure.key] if figure.needs else [])


def section_words() -> dict[str, str]:
    """metrics.json key -> what a correction calls the figure."""
    return {figure.key: figure.words for figure in FIGURES}


def figure_series() -> tuple[Series, ...]:
    """Every figure's Prometheus series, in FIGURES' order."""
    return tuple(s for figure in FIGURES for s in figure.series)


def page_sections() -> list[str]:
    """The figures' sections of a page, in FIGURES' order: templates/partials/<name>.html.j2 and
    <name>.txt.j2, the page's and the plain text's."""
    return [f.section for f in FIGURES if f.section]


def read_figures(reading: Reading) -> dict:
    """Every figure of the period, as read (flows/figures/period_figures.py writes the unmeasured ones)."""
    return {figure.key: figure.read(reading) for figure in FIGURES}
