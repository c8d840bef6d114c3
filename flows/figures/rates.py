"""Counts over an exposure: their rates with exact (Garwood) Poisson intervals, the interval of an
observed MTTF or mean ETTR, and the exact tests that compare two rates (a month against another,
a cluster against another), each family of tests corrected for its size (Holm).

What SQL should not do: every count and exposure comes from a mart (flows/figures/period.py).
"""

from __future__ import annotations

import math

import numpy as np

CONFIDENCE = 0.95


def poisson_interval(count: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Exact two-sided interval for a Poisson mean given `count` events (Garwood, chi-square form)."""
    from scipy.stats import chi2  # where used: importing the figures stays light

    alpha = 1 - confidence
    lower = 0.0 if count == 0 else chi2.ppf(alpha / 2, 2 * count) / 2
    upper = chi2.ppf(1 - alpha / 2, 2 * count + 2) / 2
    return float(lower), float(upper)


def failure_rate(failures: int, node_days: float) -> dict:
    """r_f in failures per 1000 node-days with its interval (None without exposure)."""
    lower, upper = poisson_interval(failures)

    def per_1000(count: float) -> float | None:
        return count * 1000 / node_days if node_days > 0 else None

    return {
        "failures": failures,
        "node_days": node_days,
        "value": per_1000(failures),
        "lower": per_1000(lower),
        "upper": per_1000(upper),
        "unit": "failures per 1000 node-days",
    }


def mttf_interval(runtime_hours: float, failures: int) -> dict:
    """The interval of an observed MTTF (runtime / failures) from the Poisson count; with 0
    failures only a lower bound."""
    lower_count, upper_count = poisson_interval(failures)
    return {
        "mttf_lower_hours": runtime_hours / upper_count if runtime_hours > 0 else None,
        "mttf_upper_hours": runtime_hours / lower_count if failures and runtime_hours > 0 else None,
    }


def mean_interval(
    mean: float, stddev: float | None, n: int, upper_bound: float | None = 1.0
) -> tuple[float | None, float | None]:
    """Student-t 95% interval of a mean from n values, not below 0 nor above `upper_bound` (a mean
    ETTR's is 1; none: no bound), none from one value."""
    from scipy.stats import t  # where used: importing the figures stays light

    if n < 2 or stddev is None:
        return None, None
    if stddev == 0:
        return mean, mean
    lower, upper = t.interval(CONFIDENCE, n - 1, loc=mean, scale=stddev / n**0.5)
    return max(float(lower), 0.0), float(upper) if upper_bound is None else min(float(upper), upper_bound)


def lognormal_mean_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """The interval of the mean of a positive, right-skewed quantity (a repair time) from its sample:
    the modified Cox interval of a log-normal mean, exp(m + s²/2 ± t·sqrt(s²/n + s⁴/(2(n-1)))) with m
    and s² the logs' mean and variance (Olsson 2005). Both ends are positive, where Student's t
    about the mean of a few long-tailed values reaches below zero. None from fewer than two values
    or from a value that is not positive (its log is undefined)."""
    from scipy.stats import t  # where used: importing the figures stays light

    n = len(values)
    if n < 2 or min(values) <= 0:
        return None, None
    logs = np.log(values)
    mean, variance = float(logs.mean()), float(logs.var(ddof=1))
    spread = float(t.ppf(1 - (1 - confidence) / 2, n - 1)) * math.sqrt(variance / n + variance**2 / (2 * (n - 1)))
    centre = mean + variance / 2
    return math.exp(centre - spread), math.exp(centre + spread)


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """The exact, distribution-free interval of a median from its sample `values` sorted smallest
    first: [x(j), x(n-j+1)] for the largest j whose binomial tail P(Bin(n, 1/2) < j) is at most
    (1 - confidence) / 2; none below 6 values, which no such interval covers at 95%."""
    from scipy.stats import binom  # where used: importing the figures stays light

    n, alpha = len(values), 1 - confidence
    j = int(binom.ppf(alpha / 2, n, 0.5)) if n else 0
    while j >= 1 and binom.cdf(j - 1, n, 0.5) > alpha / 2:
        j -= 1
    if j < 1:
        return None, None
    return float(values[j - 1]), float(values[n - j])


def rate_change(failures: int, node_days: float, previous_failures: int, previous_node_days: float) -> dict:
    """This month's failure rate against the previous month's, with an exact test of equal rates:
    given both counts, this month's is binomial with p = its share of the exposure. `significant`
    when the two-sided p-value is below 1 - CONFIDENCE (a Poisson test, not a fixed percentage)."""
    from scipy.stats import binomtest  # where used: importing the figures stays light

    current = failure_rate(failures, node_days)["value"]
    before = failure_rate(previous_failures, previous_node_days)["value"]
    if not node_days or not previous_node_days or failures + previous_failures == 0:
        return {"value": current, "previous": before, "change": None, "p_value": None, "significant": False}
    test = binomtest(failures, failures + previous_failures, node_days / (node_days + previous_node_days))
    return {
        "value": current,
        "previous": before,
        "change": (current - before) / before if before else None,
        "p_value": test.pvalue,
        "significant": bool(test.pvalue < 1 - CONFIDENCE),
    }


def rate_ratio(failures_a: int, exposure_a: float, failures_b: int, exposure_b: float) -> dict:
    """Rate ratio a / b of two Poisson counts with its exact interval and test of equal rates: given
    both counts, a's is binomial with p = a's share of the exposure at equal rates (the
    conditional test; the interval maps Clopper-Pearson's interval of p onto the ratio). A count
    that was not measured (None) has no ratio."""
    from scipy.stats import binomtest  # where used: importing the figures stays light

    if failures_a is None or failures_b is None or exposure_a is None or exposure_b is None:
        return {"ratio": None, "lower": None, "upper": None, "p_value": None}
    rate_a = failures_a / exposure_a if exposure_a > 0 else None
    rate_b = failures_b / exposure_b if exposure_b > 0 else None
    total = failures_a + failures_b
    if not exposure_a or not exposure_b or total == 0:
        return {"ratio": None, "lower": None, "upper": None, "p_value": None}
    test = binomtest(failures_a, total, exposure_a / (exposure_a + exposure_b))
    interval = test.proportion_ci(confidence_level=CONFIDENCE, method="exact")

    def ratio(p: float) -> float | None:
        return None if p >= 1 else p / (1 - p) * exposure_b / exposure_a

    return {
        "ratio": rate_a / rate_b if rate_b else None,
        "lower": ratio(interval.low),
        "upper": ratio(interval.high),
        "p_value": float(test.pvalue),
    }


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the k-th smallest p of m is multiplied
    by m - k + 1 and kept at least the one before it (capped at 1). Flagging adjusted p < alpha holds
    the chance of any false flag in the family at alpha, whatever the tests' dependence. (Written out:
    scipy has no Holm, and statsmodels, which has, is not a dependency.)"""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def flag_family(tests: dict[str, dict], description: str) -> dict:
    """One family of tests of change ({name: a test with its p_value}) with Holm-adjusted p-values: a
    test is `flagged` when its adjusted p is below 1 - CONFIDENCE. Tests with nothing to test (p
    None) are listed unflagged and do not count in the family."""
    tested = [name for name, test in tests.items() if test["p_value"] is not None]
    adjusted = dict(zip(tested, holm([tests[name]["p_value"] for name in tested]), strict=True))
    return {
        "description": description,
        "tests_counted": len(tested),
        "tests": {
            name: {  # its p_value is its test's (the change's or the ratio's): said there once
                "p_adjusted": float(adjusted[name]) if name in adjusted else None,
                "flagged": bool(name in adjusted and adjusted[name] < 1 - CONFIDENCE),
            }
            for name, test in tests.items()
        },
    }
