import math
from datetime import UTC, datetime

import pytest

from flows.analysis import failure_rate, model_mttf_hours, mttf_interval, poisson_interval
from flows.months import Month


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
