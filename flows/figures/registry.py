"""Every figure of a period, declared once (flows/figures/figure.py `Figure`): what a month's report
and a study both show of a cluster's period, in the order the pages show their sections.

Derived from FIGURES, and nowhere else listed: the period's document class (`PeriodFigures`), the
figures' measurability rules (flows/figures/measured.py), a correction's names of them
(flows/delivery/fingerprint.py), their Prometheus series (flows/report/openmetrics.py), their
sections of the HTML and text pages (`page_sections`), and their Grafana panels (checked by
tests/test_figure_registry.py); its documentation in docs/metrics.md, its description in the JSON
Schema and its marts in dbt's exposure (written by flows/figures/derived.py). A new figure is a
module with its type, its reader and its declaration (as breakdowns.py, repair.py; `since` the next
schema version), one line here, its mart and yml, its partials, its section of docs/methodology.md,
its simulator truth and its test.
"""

from __future__ import annotations

from flows.figures import breakdowns, crash_loops, failure_times, lemons, repair
from flows.figures.figure import Figure, Reading, Series
from flows.figures.figure_types import (
    CauseFigure,
    EttrVsExpected,
    FleetFaultRate,
    LostGoodput,
    MttfBucket,
    NodeFailureRate,
    Projection,
    Totals,
)
from flows.figures.models import projections
from flows.figures.period import (
    ETTR_BY_SIZE,
    EXPOSURE,
    FAILURES_BY_CAUSE,
    LOST_GOODPUT,
    MTTF_BY_SIZE,
    RATE_KEEP,
    TOTALS,
    ettr_vs_expected,
    failures_by_cause,
    fleet_fault_rate,
    lost_goodput,
    mttf_by_size,
    unmeasured_rates,
)
from flows.figures.samples import (
    DEFINITIONS,
    ettr_samples,
    hours,
    mttf_samples,
    rate_samples,
)

FIGURES: tuple[Figure, ...] = (
    Figure(
        "totals",
        "totals",
        Totals,
        lambda r: r.totals,
        (
            "`attempts`, `gpu_attempts` and `cpu_only_attempts` (they add up to `attempts`; only GPU attempts "
            'are in the GPU figures: docs/methodology.md "GPU attempts"), `gpu_hours`, `gpu_node_days` (the '
            "GPU attempts' node-days, r_f's exposure), `infra_failures` (of GPU attempts; null where no GPU "
            "attempt ended in the month, `not_measured` `totals.infra_failures` says why: none ran, or every "
            "one was still running at its end, so nothing could have ended in a failure), `cpu_only_nodes` "
            "(nodes seen that are not GPU nodes: in neither the fleet's fault rate nor the lemon fleet, "
            'docs/methodology.md "GPU nodes"), `open_attempts` (still running at the month\'s end or at the '
            "dump: exposure only, never a failure), `unknown_states`"
        ),
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
        ("`paper` and `all`: r_f under both definitions (rate object plus `definition`)"),
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
        (
            "node faults per 1000 node-days over every GPU node, busy or idle (methodology \"The fleet's node "
            'fault rate", "GPU nodes"): the rate object, its `failures` the month\'s node faults on GPU nodes '
            "(`fct_node_faults`, `dim_nodes.is_gpu_node`) and its `node_days` the fleet's (GPU nodes seen x "
            "the month's observed days), plus `nodes` (the fleet: GPU nodes) and `definition`; what published "
            "fleets report, beside r_f"
        ),
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
        (
            "per size bucket: `attempts`, `ended_attempts`, `runtime_hours`, `gpu_hours`, `gpu_node_days`, "
            "`infra_failures`; `mttf_hours` with `mttf_lower_hours` / `mttf_upper_hours` (only a lower bound "
            "when there were no failures); `model_mttf_hours.{paper,all}` = 1 / ((N / gpus_per_node) x r_f)"
        ),
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
        ("`gpus`, `mttf_hours_paper`, `mttf_hours_all` at the configured sizes"),
        named={"projections": "the projected MTTF"},
        needs=("gpu_exposure",),
    ),
    Figure(
        "failures_by_cause",
        "failures by cause",
        list[CauseFigure],
        lambda r: failures_by_cause(r.con, r.period),
        (
            "`category`, `failure_domain`, `failures` (`node_fail` / `failed` / `requeued`), `node_days` (all "
            "GPU node-days), `per_1000_node_days` with `per_1000_node_days_lower` / "
            "`per_1000_node_days_upper` (its exact 95% interval), `per_million_gpu_hours`. A month compares "
            "each cause with last month (`month_over_month_by_cause.<category>`, its Holm-corrected test "
            "`change_flags.families.month_over_month_by_cause.tests.<category>`) and with the longest "
            "`history.trailing` window holding two built months or more (its row of the cause in "
            "`by_cause`, its test in `change_flags.families.trend_by_cause_<n>_months`); the report joins "
            "them by category (MonthDocument.causes_compared), metrics.json says each once"
        ),
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
        (
            'ETTR as the paper measured it (methodology "ETTR as the paper measured it"): `priority_qos`, '
            "`priority_partition` (what the highest-priority runs were selected on), `r_f_definition`, `r_f`, "
            "`ckpt_minutes`, `min_run_hours`, and `priority[]` and `all[]` per size bucket of the long job "
            "runs that ended this month, each with its whole history: `size_bucket`, `min_gpus`, `max_gpus`, "
            "`runs`, `runs_from_earlier_months`, `mean_gpus`, `mean_ettr` with `mean_lower` / `mean_upper` "
            "(Student t, 95%; null for one run), `stddev_ettr`, `median_ettr`, `min_ettr`, `expected_ettr` "
            "(E[ETTR] at `mean_gpus`), `formula_valid`, `model_applies` (`mean_gpus` >= "
            "`ettr_model_min_gpus`)"
        ),
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
        (
            "`lost_gpu_hours` = `first_order_gpu_hours` (failed attempts) + `second_order_gpu_hours` "
            "(`second_order_preemptions`); `share_of_gpu_hours`; `estimator` (the wording the report shows: "
            "it is an estimate)"
        ),
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
    breakdowns.FIGURE,
    lemons.FIGURE,
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
