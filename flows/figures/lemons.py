"""Lemon-node candidates (docs/methodology.md "Lemon nodes"): nodes that fail far more often than the fleet.

The signals are dbt models (their yml defines each): fct_node_lemon_signals has, per node over each
lemon window of a period (dim_periods: a month's own, default 28 days, and its trailing one, default
92 days, each ending at its end, or the months built if fewer; a study's range), incident_hours
(hours with at least one critical health event on the node), xid_cnt, out_count, tickets, the
infrastructure failures that named the node as the cause (multi-node, single-node, and the
single-node failure rate), the failure incidents (failures within an hour of each other are one: one
fault ends every job on the node) and the most incidents within `lemon_repeat_days`;
fct_period_lemon_fleet has each window and its fleet; fct_period_lemon_signal_distribution the
fleet's distribution of each signal (the report's chart). Each window is fitted and judged on its
own: a period's own at `lemon_p_value`, a month's trailing one at `lemon_trailing_p_value`.

Python does what SQL should not: the fleet fits and the two rules fitted to them. Healthy nodes
differ (their rates are overdispersed), so the fleet of each count is a negative binomial fitted by
maximum likelihood, not a Poisson at the fleet mean, which flags the unluckiest healthy nodes. The
fits are of the bulk (bulk_fit): the counts above a cap are left out of the likelihood, which is
truncated there, so that lemons do not inflate the variance and hide each other. A node is a
candidate when

- outlier: at least `lemon_min_incidents` incident hours and a fleet tail below `lemon_p_value`;
- repeat offender: at least k failure incidents within `lemon_repeat_days`, where k (at least
  `lemon_repeat_failures`) is the smallest count whose chance for a node of the fleet is below
  `lemon_p_value`. That chance is bounded: every span of d days lies inside one of the
  ceil(W/d) - 1 windows of 2d days starting at multiples of d in the window of W days, so
  P(some d-day span has >= k) <= (ceil(W/d) - 1) x P(N_2d >= k), N_2d a node's count over 2d days
  (the fitted negative binomial, its mean scaled by 2d / W).

Each candidate has its evidence, both p-values and p_value, the smaller: a healthy node is listed
with a chance below 2 x `lemon_p_value` a month (the two rules' chances added).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass

import numpy as np

from flows.config.cluster import AnalysisConfig
from flows.figures.figure import Figure, Series, unmeasured_dict
from flows.figures.figure_types import LemonNodes
from flows.figures.period import OF_PERIOD, Period
from flows.figures.samples import lemon_count_samples
from flows.warehouse.engines import MartReader

# the columns of fct_node_lemon_signals read here (its yml defines each)
SIGNALS = (
    "node",
    "health_events",
    "incident_hours",
    "xid_cnt",
    "out_count",
    "tickets",
    "failure_incidents",
    "most_incidents_within_repeat_days",
    "multi_node_node_fails",
    "single_node_node_fails",
    "single_node_node_failure_rate",
)
EVIDENCE = SIGNALS[2:]
MIN_CAP = 3  # below 3 values (0, 1, 2) the truncated fit cannot tell the mean from the dispersion
BULK_TAIL = 0.01


@dataclass(frozen=True)
class FleetFit:
    """A count per node over a window, fitted to the fleet by moments: a negative binomial when the
    counts vary more than a Poisson's would (dispersion = variance / mean > 1), else a Poisson."""

    mean: float
    dispersion: float

    def tail(self, k: int, scale: float = 1.0) -> float:
        """P(X >= k) for a node of the fleet, over `scale` times the fitted window: each node keeps
        its own rate, so the negative binomial's size stays and only its mean scales."""
        from scipy.stats import nbinom, poisson  # where used: importing the figures stays light

        mean = self.mean * scale
        if k <= 0:
            return 1.0
        if not mean:
            return 0.0
        if self.dispersion <= 1.0:
            return float(poisson.sf(k - 1, mean))
        size = self.mean / (self.dispersion - 1.0)  # scipy's n: mean^2 / (variance - mean)
        return float(nbinom.sf(k - 1, size, size / (size + mean)))


def fleet_fit(counts: list[int]) -> FleetFit:
    """The moments fit of `counts` (one per node of the fleet)."""
    # exact arithmetic: the same counts in any order give the same bits (a re-run must not differ)
    mean = statistics.fmean(counts) if counts else 0.0
    variance = statistics.variance(counts) if len(counts) > 1 else 0.0
    return FleetFit(mean, variance / mean if mean else 1.0)


def bulk_fit(counts: list[int]) -> FleetFit:
    """The fleet of `counts` fitted to its bulk, robust to the lemons among them: the maximum-likelihood
    negative binomial of the counts below a cap, truncated there, so that the nodes above it (the
    lemons, however far out) do not widen the fit. The cap is where the fit leaves BULK_TAIL of
    the fleet above it (at least MIN_CAP), refitted until it stops moving."""
    histogram = Counter(counts)
    # the first cap from the median, which the lemons barely move (the moments of every count
    # would put it beyond them)
    cap = max(MIN_CAP, 2 * int(statistics.median(counts)) + 1) if counts else MIN_CAP
    fit = fleet_fit([c for c in counts if c < cap])
    top = max(counts, default=0)  # a cap above every count leaves none out
    seen: set[int] = set()
    while fit.mean and cap not in seen:
        seen.add(cap)
        fit = _truncated_fit({v: n for v, n in histogram.items() if v < cap}, cap, fit)
        cap = MIN_CAP
        while fit.tail(cap) >= BULK_TAIL and cap <= top:
            cap += 1
    return fit


def _truncated_fit(histogram: dict[int, int], cap: int, start: FleetFit) -> FleetFit:
    """The maximum-likelihood negative binomial (mean, dispersion) of counts known to be below `cap`
    (histogram: value -> nodes), from `start`; a dispersion of 1 is the Poisson limit."""
    from scipy.optimize import minimize  # where used: importing the figures stays light
    from scipy.stats import nbinom

    values = np.array(sorted(histogram))
    nodes = np.array([histogram[v] for v in values], dtype=float)
    below = np.arange(cap)

    def negative_log_likelihood(x: np.ndarray) -> float:
        mean, excess = math.exp(x[0]), math.exp(x[1])  # excess = dispersion - 1 = mean / size
        size = mean / excess
        logpmf = nbinom.logpmf(values, size, size / (size + mean))
        return float(-(nodes @ logpmf) + nodes.sum() * math.log(nbinom.pmf(below, size, size / (size + mean)).sum()))

    # bounded: counts spread evenly below the cap would otherwise run off to an infinite mean and
    # dispersion (a flat distribution); the fleet's mean is below the cap, its dispersion finite
    bounds = [(math.log(1e-6), math.log(cap)), (math.log(1e-6), math.log(1e3))]
    x0 = [min(math.log(start.mean), bounds[0][1]), math.log(min(max(start.dispersion - 1.0, 1e-3), 1e3))]
    best = minimize(
        negative_log_likelihood, x0, method="Nelder-Mead", bounds=bounds, options={"xatol": 1e-6, "fatol": 1e-9}
    )
    return FleetFit(math.exp(best.x[0]), 1.0 + math.exp(best.x[1]))


@dataclass(frozen=True)
class Rules:
    """The two rules of a month, fitted to the bulk of its fleet."""

    incidents: FleetFit  # incident hours over the window
    failures: FleetFit  # failure incidents over the window
    window_days: int
    params: AnalysisConfig
    p_value: float | None = None  # the rules' p (default: params.lemon_p_value, a period's own window)

    @property
    def p(self) -> float:
        return self.params.lemon_p_value if self.p_value is None else self.p_value

    def incident_p(self, s: dict) -> float:
        return self.incidents.tail(s["incident_hours"])

    def repeat_p(self, s: dict) -> float:
        """The bound on a fleet node's chance of reaching the node's most incidents within lemon_repeat_days."""
        d, w = self.params.lemon_repeat_days, self.window_days
        spans = max(1, math.ceil(w / d) - 1)
        return min(1.0, spans * self.failures.tail(s["most_incidents_within_repeat_days"], min(2 * d, w) / w))

    def hits(self, s: dict) -> list[str]:
        p = self.params
        rules = []
        if s["incident_hours"] >= p.lemon_min_incidents and self.incident_p(s) < self.p:
            rules.append("outlier")
        if s["most_incidents_within_repeat_days"] >= p.lemon_repeat_failures and self.repeat_p(s) < self.p:
            rules.append("repeat_offender")
        return rules

    def repeat_threshold(self) -> int:
        """k: the fewest incidents within lemon_repeat_days that make a repeat offender."""
        k = self.params.lemon_repeat_failures
        while self.repeat_p({"most_incidents_within_repeat_days": k}) >= self.p:
            k += 1
        return k


def fit_rules(
    signals: list[dict], zeros: int, window_days: int, params: AnalysisConfig, p_value: float | None = None
) -> Rules:
    """The rules fitted to the bulk of the fleet: `signals` (rows of fct_node_lemon_signals) and
    `zeros` nodes with none."""
    return Rules(
        bulk_fit([s["incident_hours"] for s in signals] + [0] * zeros),
        bulk_fit([s["failure_incidents"] for s in signals] + [0] * zeros),
        window_days,
        params,
        p_value,
    )


# each lemon window of fct_period_lemon_fleet and the p its rules are judged at
WINDOW_P_VALUE = {"own": "lemon_p_value", "trailing": "lemon_trailing_p_value"}


# a window's keys kept as they are when the candidates are not measured: the window, not a figure
LEMON_KEEP = ("window_start", "window_end", "window_days")


def unmeasured_lemons(lemon_nodes: dict, why: str, _gaps: dict[str, str]) -> dict:
    """The lemon-node candidates not measured, its trailing window's too."""
    result = unmeasured_dict({k: v for k, v in lemon_nodes.items() if k != "trailing"}, why, LEMON_KEEP)
    result["signal_distribution"] = {}
    if "trailing" in lemon_nodes:
        trailing = unmeasured_dict(lemon_nodes["trailing"], why, LEMON_KEEP)
        result["trailing"] = trailing | {"signal_distribution": {}}
    return result


def lemon_candidates(con: MartReader, period: Period, params: AnalysisConfig) -> dict:
    """The period's candidates over its own window (a month's lemon_window_days, a study's range),
    and `trailing` the same over its trailing window where fct_period_lemon_fleet has one (a
    month's lemon_trailing_days, or the months built if fewer; none when it is 0, nor for a study)."""
    result = window_candidates(con, period, params, "own")
    (trailing_windows,) = con.execute(
        f"select count(*) from fct_period_lemon_fleet where {OF_PERIOD} and lemon_window = 'trailing'",
        period.key,
    ).fetchone()
    if trailing_windows:
        result["trailing"] = window_candidates(con, period, params, "trailing")
    return result


def window_candidates(con: MartReader, period: Period, params: AnalysisConfig, window: str) -> dict:
    """One window's candidates with their evidence, from the marts fct_period_lemon_fleet (window
    and fleet), fct_node_lemon_signals (a node's signals) and fct_period_lemon_signal_distribution
    (the fleet's distribution of each signal)."""
    of_window = f"where {OF_PERIOD} and lemon_window = ?"
    window_start, window_end, fleet, zeros = con.execute(
        f"select window_start, window_end, fleet_nodes, nodes_without_signals from fct_period_lemon_fleet {of_window}",
        [*period.key, window],
    ).fetchone()
    cursor = con.execute(
        f"select {', '.join(SIGNALS)} from fct_node_lemon_signals {of_window} order by node", [*period.key, window]
    )
    signals = [dict(zip(SIGNALS, row, strict=True)) for row in cursor.fetchall()]
    window_days = (window_end - window_start).days
    p_value = getattr(params, WINDOW_P_VALUE[window])
    rules = fit_rules(signals, zeros, window_days, params, p_value)
    candidates = []
    for s in signals:
        if hits := rules.hits(s):
            incident_p, repeat_p = rules.incident_p(s), rules.repeat_p(s)
            candidates.append(
                {
                    "node": s["node"],
                    "rules": hits,
                    "p_value": min(incident_p, repeat_p),
                    "incident_p_value": incident_p,
                    "repeat_p_value": repeat_p,
                    **{k: s[k] for k in EVIDENCE},
                }
            )
    failures = _failure_times(con, [c["node"] for c in candidates], window_start, window_end)
    for candidate in candidates:
        candidate["failures"] = failures[candidate["node"]]
    candidates.sort(key=lambda c: (c["p_value"], c["node"]))
    return {
        "window_start": window_start.isoformat(),
        "window_end": window_end.isoformat(),
        "window_days": window_days,
        "fleet_nodes": fleet,
        "fleet_mean_incident_hours": rules.incidents.mean,
        "fleet_incident_dispersion": rules.incidents.dispersion,
        "fleet_mean_failure_incidents": rules.failures.mean,
        "fleet_failure_dispersion": rules.failures.dispersion,
        "repeat_threshold": rules.repeat_threshold(),
        "candidates": candidates,
        "signal_distribution": signal_distribution(con, period, window),
    }


def signal_distribution(con: MartReader, period: Period, window: str) -> dict[str, list[list[float]]]:
    """signal -> [value, share of the fleet at or below it] (rows of fct_period_lemon_signal_distribution)."""
    distribution: dict[str, list[list[float]]] = {}
    for signal, value, share in con.execute(
        "select signal, value, share_at_or_below from fct_period_lemon_signal_distribution "
        f"where {OF_PERIOD} and lemon_window = ? order by signal, value",
        [*period.key, window],
    ).fetchall():
        distribution.setdefault(signal, []).append([value, share])
    return distribution


def _failure_times(con: MartReader, nodes: list[str], start, end) -> dict[str, list[str]]:
    """node -> the times (ISO) of the failures in the window that named it as the cause, in order:
    rows of the mart fct_failures, the evidence listed with each candidate."""
    times: dict[str, list[str]] = {node: [] for node in nodes}
    if nodes:
        for node, failed_at in con.execute(
            "select cause_node, failed_at from fct_failures where failed_at >= ? and failed_at < ? "
            f"and cause_node in ({', '.join(['?'] * len(nodes))}) order by failed_at",
            [start, end, *nodes],
        ).fetchall():
            times[node].append(failed_at.isoformat())
    return times


FIGURE = Figure(
    "lemon_nodes",
    "lemon-node candidates",
    LemonNodes,
    lambda r: lemon_candidates(r.con, r.period, r.params),
    (
        "`window_start`, `window_end`, `window_days` (a month's `lemon_window_days` before its end, a "
        "study's cluster's range), `fleet_nodes`, the bulk fits of the fleet "
        "(`fleet_mean_incident_hours`, `fleet_incident_dispersion`, `fleet_mean_failure_incidents`, "
        "`fleet_failure_dispersion`: mean and variance / mean of the negative binomial fitted to the "
        "nodes below the lemons), `repeat_threshold` (the incidents within `lemon_repeat_days` that make "
        "a repeat offender; the rules are judged at `parameters.lemon_p_value`), `signal_distribution` "
        "(signal -> [value, share of the fleet at or below it], from "
        "`fct_period_lemon_signal_distribution`), and `candidates[]` with `node`, `rules` (`outlier`, "
        "`repeat_offender`), `p_value` (the smaller of `incident_p_value`, the fleet tail of its incident "
        "hours, and `repeat_p_value`, the bound on a fleet node's chance of its repeats) and the "
        "evidence: `incident_hours`, `failure_incidents`, `most_incidents_within_repeat_days`, `xid_cnt`, "
        "`out_count`, `tickets`, `multi_node_node_fails`, `single_node_node_fails`, "
        "`single_node_node_failure_rate`, `failures` (times). `trailing`: the same keys over the trailing "
        "window (`lemon_trailing_days`, or the months built if fewer; judged at "
        "`parameters.lemon_trailing_p_value`), absent when `lemon_trailing_days` is 0 and in a study (its "
        "range is the window). The candidates of both windows (each node once) are also written as "
        "`lemon_nodes.hostlist` and `drain_lemon_nodes.sh` (never run), and counted in the summary's "
        "headline"
    ),
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
)
