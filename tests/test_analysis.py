import math
from datetime import UTC, datetime

import numpy as np
import pytest

from flows.core.months import Month
from flows.figures.models import model_mttf_hours
from flows.figures.rates import (
    failure_rate,
    flag_family,
    holm,
    lognormal_mean_interval,
    mean_interval,
    mttf_interval,
    poisson_interval,
    rate_change,
)


def test_poisson_interval_exact_values():
    lower, upper = poisson_interval(0)
    assert lower == 0 and upper == pytest.approx(3.6889, abs=1e-4)
    lower, upper = poisson_interval(10)
    assert lower == pytest.approx(4.7954, abs=1e-4) and upper == pytest.approx(18.3904, abs=1e-4)


def test_model_mttf_reproduces_the_papers_projections():
    # docs/methodology.md: r_f = 6.50 gives 1.80 h at 16384 and 0.225 h at 131072 GPUs.
    assert model_mttf_hours(16384, 6.5, 8) == pytest.approx(1.80, abs=0.005)
    assert model_mttf_hours(131072, 6.5, 8) == pytest.approx(0.225, abs=0.001)
    assert model_mttf_hours(8, None, 8) is None


def test_observed_mttf_bounds():
    with_failures = mttf_interval(1000.0, 4)
    assert with_failures["mttf_lower_hours"] < 250 < with_failures["mttf_upper_hours"]
    none = mttf_interval(1000.0, 0)
    assert none["mttf_upper_hours"] is None
    assert none["mttf_lower_hours"] == pytest.approx(1000 / 3.6889, rel=1e-4)


def test_failure_rate_per_1000_node_days():
    rate = failure_rate(13, 2000.0)
    assert rate["value"] == 6.5 and rate["lower"] < 6.5 < rate["upper"]
    assert failure_rate(0, 0.0)["value"] is None


def test_months():
    m = Month.parse("2026-12")
    assert m.start == datetime(2026, 12, 1, tzinfo=UTC) and m.end == datetime(2027, 1, 1, tzinfo=UTC)
    assert str(Month.parse("2027-01").previous()) == "2026-12"
    assert Month.last_full(datetime(2026, 1, 15, tzinfo=UTC)) == Month(2025, 12)
    assert math.isclose(Month.parse("2026-02").days, 28)
    for bad in ("2026-13", "2026-1", "26-01", "2026/01"):
        with pytest.raises(ValueError, match="YYYY-MM"):
            Month.parse(bad)


def test_holm_adjusted_p_values():
    # the step-down by hand: 0.005 x 4, 0.01 x 3, 0.03 x 2 (kept for 0.04 x 1 too), capped at 1
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []


def test_holm_keeps_sixteen_unchanged_causes_from_flagging_noise():
    """16 causes, none changed (each test's p uniform): raw p < 0.05 flags some cause in about
    half of the months, Holm in at most 5%."""
    rng = np.random.default_rng(22)
    raw = corrected = 0
    draws = 2000
    for _ in range(draws):
        p_values = rng.uniform(size=16)
        family = flag_family({f"cause{i}": {"p_value": p} for i, p in enumerate(p_values)}, "noise")
        raw += bool((p_values < 0.05).any())
        corrected += any(t["flagged"] for t in family["tests"].values())
    assert 0.5 < raw / draws < 0.62 and corrected / draws <= 0.055


def test_a_cause_whose_rate_tripled_is_still_flagged_among_sixteen():
    """Counts drawn at the same rate in both months for 15 causes and at three times the rate this
    month for one: the tripled cause is flagged after Holm, the others almost never."""
    rng = np.random.default_rng(7)
    rates = [0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 3.0, 0.3, 0.6, 1.2, 1.8, 2.2, 0.9, 0.4, 1.1]
    node_days = 30000.0
    found = false_flags = 0
    for _ in range(10):
        tests = {}
        for i, (before, now) in enumerate([*((r, r) for r in rates), (2.0, 6.0)]):
            counts = rng.poisson([before * node_days / 1000, now * node_days / 1000])
            tests[f"cause{i}"] = rate_change(int(counts[1]), node_days, int(counts[0]), node_days)
        family = flag_family(tests, "one change")
        found += family["tests"]["cause15"]["flagged"]
        false_flags += sum(t["flagged"] for name, t in family["tests"].items() if name != "cause15")
    assert found == 10 and false_flags <= 1


def test_the_mean_ettr_interval_covers_the_true_mean():
    rng = np.random.default_rng(9)
    covered = 0
    for _ in range(500):
        ettr = np.clip(rng.normal(0.93, 0.04, size=12), 0, 1)
        lower, upper = mean_interval(float(ettr.mean()), float(ettr.std(ddof=1)), 12)
        covered += lower <= 0.93 <= upper
    assert 0.925 <= covered / 500 <= 0.975
    assert mean_interval(0.9, None, 1) == (None, None) and mean_interval(1.0, 0.0, 3) == (1.0, 1.0)


def test_a_repair_times_interval_is_positive_or_too_few_repairs_to_bound():
    """Two repairs (5 h and 30.2 h) bound nothing: Student's t gave 17.6 (0.0 - 210.2), a repair time
    of 0 h. From six repairs on, the mean's interval is log-normal: above 0 where t reaches below it,
    and it covers the true mean of log-normal repair times about 93% of the time from 8 (Student's t: 78%)."""
    from flows.figures.repair import MIN_REPAIRS_TO_BOUND, repair_summary

    two = repair_summary({"repairs": 2, "mean_repair_hours": 17.6, "stddev_repair_hours": 17.8,
                          "median_repair_hours": 17.6, "repair_hours": [5.0, 30.2]})  # fmt: skip
    assert MIN_REPAIRS_TO_BOUND == 6
    assert [two[k] for k in ("mean_lower_hours", "mean_upper_hours", "median_lower_hours")] == [None, None, None]
    hours = [0.5, 0.7, 1.0, 2.0, 3.0, 60.0]
    six = repair_summary({"repairs": 6, "mean_repair_hours": float(np.mean(hours)), "repair_hours": hours,
                          "stddev_repair_hours": float(np.std(hours, ddof=1)), "median_repair_hours": 1.5})  # fmt: skip
    assert mean_interval(float(np.mean(hours)), float(np.std(hours, ddof=1)), 6, upper_bound=None)[0] == 0.0
    assert 0 < six["mean_lower_hours"] < six["mean_hours"] < six["mean_upper_hours"]
    rng = np.random.default_rng(7)
    mu, sigma = 1.5, 1.2
    truth = math.exp(mu + sigma**2 / 2)
    samples = [rng.lognormal(mu, sigma, 8) for _ in range(2000)]
    covered = np.mean([lower <= truth <= upper for lower, upper in map(lognormal_mean_interval, map(list, samples))])
    student = np.mean(
        [lo <= truth <= hi for lo, hi in (mean_interval(x.mean(), x.std(ddof=1), 8, upper_bound=None) for x in samples)]
    )
    assert 0.91 <= covered <= 0.97 and student < 0.85  # t's interval misses a long tail's mean one time in five
