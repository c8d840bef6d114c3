"""What compares months or clusters: a month's r_f and each cause's rate against the previous
month and against its trailing windows (the periods of kind `trailing` ending at it, dim_periods),
the r_f of each month of a range, and the rate ratios between clusters; each family of tests
Holm-corrected (flows/figures/rates.py)."""

from __future__ import annotations

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.period import Mart, Period, failures_by_cause
from flows.figures.rates import CONFIDENCE, failure_rate, flag_family, mttf_interval, rate_change, rate_ratio
from flows.figures.repair import node_repairs
from flows.warehouse.engines import MartReader, mart_rows

# --- months -----------------------------------------------------------------------------------


def rates_by_month(con: MartReader, first: Month, last: Month) -> dict[str, dict]:
    """The r_f counts of each built month of first..last (its period of kind `month`), by month, oldest first."""
    rows = mart_rows(
        con,
        "select last_month as month, paper_failures, paper_node_days, all_failures, all_node_days "
        "from fct_period_node_failure_rate where kind = 'month' and last_month between ? and ? order by last_month",
        [str(first), str(last)],
    )
    return {row["month"]: row for row in rows}


def monthly_rates(con: MartReader, first: Month, last: Month) -> list[dict]:
    """r_f under both definitions of each built month of first..last, oldest first (the trend)."""
    return [
        {"month": month, **{d: failure_rate(row[f"{d}_failures"], row[f"{d}_node_days"]) for d in ("paper", "all")}}
        for month, row in rates_by_month(con, first, last).items()
    ]


def monthly_causes(con: MartReader, first: Month, last: Month) -> dict[str, dict[str, dict]]:
    """Each cause's failures and rate in each month of first..last (the paper's Fig. 5), by month."""
    by_month: dict[str, dict[str, dict]] = {}
    for row in mart_rows(
        con,
        "select periods.last_month as month, causes.cause_category, causes.failures, causes.per_1000_node_days "
        "from fct_period_failures_by_cause as causes inner join dim_periods as periods using (period_id) "
        "where periods.kind = 'month' and periods.last_month between ? and ? "
        "order by periods.last_month, causes.failures desc, causes.cause_category",
        [str(first), str(last)],
    ):
        by_month.setdefault(row["month"], {})[row["cause_category"]] = {
            "failures": row["failures"],
            "per_1000_node_days": row["per_1000_node_days"],
        }
    return by_month


def month_over_month(con: MartReader, month: Month) -> dict:
    """This month's r_f ("all") tested against the previous month's (none when it was not built)."""
    rates = rates_by_month(con, month.previous(), month)
    now = rates[str(month)]
    before = rates.get(str(month.previous()), {"all_failures": 0, "all_node_days": 0.0})
    return rate_change(now["all_failures"], now["all_node_days"], before["all_failures"], before["all_node_days"])


def causes_month_over_month(con: MartReader, month: Month, causes: list[dict]) -> dict[str, dict]:
    """Each of the month's causes (period.failures_by_cause) against the previous month: category ->
    the change of its rate and its Poisson test (`month_over_month_by_cause`)."""
    previous = month.previous()
    before = {c["category"]: c["failures"] for c in failures_by_cause(con, Period.of_month(previous))}
    previous_node_days = rates_by_month(con, previous, previous).get(str(previous), {}).get("all_node_days")
    return {
        cause["category"]: rate_change(
            cause["failures"], cause["node_days"], before.get(cause["category"], 0), previous_node_days or 0.0
        )
        for cause in causes
    }


def history_months(month: Month, params: AnalysisConfig) -> list[Month]:
    """The months of the longest trailing window, oldest first, ending at `month`."""
    months = [month]
    for _ in range(max(params.trailing_months, default=1) - 1):
        months.insert(0, months[0].previous())
    return months


def history(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    """r_f of each of the last months built (the trend chart), and over each trailing window ending
    at this month: r_f, failures by cause, MTTF by size and node repair times over the window, and this month against
    the window's earlier months (a Poisson test); and the months of the longest window before this
    one that are not built (the report says what they leave out)."""
    months = history_months(month, params)
    series = monthly_rates(con, months[0], month)
    trailing = [_trailing_window(con, Period.trailing(month, size)) for size in params.trailing_months]
    built = {m["month"] for m in series}
    earlier_missing = [str(m) for m in months[:-1] if str(m) not in built]
    return {"monthly": series, "trailing": trailing, "earlier_months_missing": earlier_missing}


def _trailing_window(con: MartReader, window: Period) -> dict:
    """One trailing window's figures with their intervals and tests of its last month (this month)
    against its earlier months."""
    (rates,) = window.rows(
        con,
        Mart(
            "fct_period_node_failure_rate",
            (
                *("window_months", "months_built", "paper_failures", "paper_node_days", "all_failures"),
                *("all_node_days", "last_month_failures", "last_month_node_days", "earlier_failures"),
                "earlier_node_days",
            ),
        ),
    )
    causes = window.rows(
        con,
        Mart(
            "fct_period_failures_by_cause",
            (
                *("cause_category", "failures", "node_days", "last_month_failures", "last_month_node_days"),
                *("earlier_failures", "earlier_node_days"),
            ),
        ),
        order="failures desc, cause_category",
    )
    sizes = window.rows(
        con,
        Mart("fct_period_mttf_by_size", ("size_bucket", "runtime_hours", "infra_failures", "mttf_hours")),
        order="bucket_order, size_bucket",
    )
    return {
        "months": rates["window_months"],
        "months_available": rates["months_built"],
        "paper": failure_rate(rates["paper_failures"], rates["paper_node_days"]),
        "all": failure_rate(rates["all_failures"], rates["all_node_days"]),
        "this_month_vs_window": _last_month_vs_earlier(rates),
        "by_cause": [
            {
                "category": c["cause_category"],
                **failure_rate(c["failures"], c["node_days"]),
                "this_month_vs_window": _last_month_vs_earlier(c),
            }
            for c in causes
        ],
        "mttf_by_size": [{**s, **mttf_interval(s["runtime_hours"], s["infra_failures"])} for s in sizes],
        "node_repairs": node_repairs(con, window),
    }


def _last_month_vs_earlier(row: dict) -> dict:
    """A window's last month's rate tested against its earlier months' (a row's split counts)."""
    return rate_change(
        row["last_month_failures"], row["last_month_node_days"], row["earlier_failures"], row["earlier_node_days"]
    )


def distinct_windows(windows: list[tuple[int, int]]) -> list[int]:
    """Of the trailing windows (each its months and the built months it holds), the months of those
    that differ, shortest first: a longer window only when it holds more built months than the one
    before it (with three months built, the 3-, 6- and 12-month windows are the same three months:
    one window, shown and tested once)."""
    distinct: list[tuple[int, int]] = []
    for months, available in sorted(windows):
        if not distinct or available > distinct[-1][1]:
            distinct.append((months, available))
    return [months for months, _ in distinct]


def change_flags(change: dict, causes: dict[str, dict], trend: dict) -> dict:
    """The report's flags of change, each family corrected for its number of tests (Holm): the
    month-over-month test of r_f (`change`), of each cause (`causes`: category -> its change), and
    this month against each trailing window (r_f over the distinct windows; each window's causes)."""
    by_months = {w["months"]: w for w in trend["trailing"]}
    shown = distinct_windows([(w["months"], w["months_available"]) for w in trend["trailing"]])
    families = {
        "month_over_month": flag_family({"r_f": change}, "r_f (all GPU jobs) against the previous month"),
        "month_over_month_by_cause": flag_family(causes, "each cause's rate against the previous month"),
        "trend": flag_family(
            {f"{months} months": by_months[months]["this_month_vs_window"] for months in shown},
            "r_f (all GPU jobs) this month against each trailing window's earlier months",
        ),
    }
    for w in trend["trailing"]:
        families[f"trend_by_cause_{w['months']}_months"] = flag_family(
            {c["category"]: c["this_month_vs_window"] for c in w["by_cause"]},
            f"each cause's rate this month against the earlier months of the {w['months']}-month window",
        )
    return {"method": "Holm", "family_wise_error_rate": 1 - CONFIDENCE, "families": families}


def causes_compared(causes: list[dict], changes: dict[str, dict], trend: dict, flags: dict) -> dict:
    """A month's causes joined by category with what they are compared with (not written: each
    number is in the document once; flows/figures/document.py MonthDocument.causes_compared): its
    change against last month (`changes`, month_over_month_by_cause) with that change's flagged
    test, and, where the longest trailing window holds two built months or more and a row of the
    cause, its rate over the window with this month's flagged test against it (`trailing`, else
    null); and the window's built months and the tests each family counted (the report's heading
    and note)."""
    families = flags["families"]
    window = max(trend["trailing"], key=lambda w: w["months"], default=None)
    earlier = {c["category"]: c for c in window["by_cause"]} if window and window["months_available"] > 1 else {}
    tests = families[f"trend_by_cause_{window['months']}_months"] if earlier else None
    by_cause = {
        cause["category"]: {
            "month_over_month": changes.get(cause["category"]),
            "month_over_month_test": families["month_over_month_by_cause"]["tests"].get(cause["category"]),
            "trailing": {
                **{
                    k: v for k, v in earlier[cause["category"]].items() if k not in ("category", "this_month_vs_window")
                },
                "test": tests["tests"].get(cause["category"]) if tests else None,
            }
            if cause["category"] in earlier
            else None,
        }
        for cause in causes
    }
    return {
        "window_months": window["months_available"] if earlier else None,
        "month_over_month_tests": families["month_over_month_by_cause"]["tests_counted"],
        "window_tests": tests["tests_counted"] if tests else None,
        "by_cause": by_cause,
    }


# --- clusters ---------------------------------------------------------------------------------


def _ratio(failures_a, exposure_a, failures_b, exposure_b) -> dict:
    """rate_ratio, or no ratio and no test where a figure was not measured (None)."""
    if None in (failures_a, exposure_a, failures_b, exposure_b):
        return {"ratio": None, "lower": None, "upper": None, "p_value": None}
    return rate_ratio(failures_a, exposure_a, failures_b, exposure_b)


def verdict(tests_run: int, differ: bool) -> str:
    """What a pair's tests allow it to say: "differ", "no difference beyond chance" (a test ran and
    none survived Holm's correction) or "not tested" (no test could run: no failure on either, or a
    rate not measured), never a conclusion from tests that did not run."""
    return "differ" if differ else "no difference beyond chance" if tests_run else "not tested"


def compare_clusters(clusters: dict[str, dict]) -> list[dict]:
    """Each pair of clusters (their study figures): the ratio of their r_f (both definitions) and of
    each cause's rate, with intervals; a family of tests per pair, Holm-corrected, says whether they
    differ; `tests_run` counts the tests that could run and `verdict` says what they allow."""
    names = sorted(clusters)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            fa, fb = clusters[a], clusters[b]
            ratios = {
                f"r_f ({d})": _ratio(
                    fa["node_failure_rate"][d]["failures"],
                    fa["node_failure_rate"][d]["node_days"],
                    fb["node_failure_rate"][d]["failures"],
                    fb["node_failure_rate"][d]["node_days"],
                )
                for d in ("paper", "all")
            }
            causes_a = {c["category"]: c for c in fa["failures_by_cause"]}
            causes_b = {c["category"]: c for c in fb["failures_by_cause"]}
            for cause in sorted(set(causes_a) | set(causes_b)):
                ratios[cause] = _ratio(
                    causes_a.get(cause, {}).get("failures", 0),
                    fa["node_failure_rate"]["all"]["node_days"],
                    causes_b.get(cause, {}).get("failures", 0),
                    fb["node_failure_rate"]["all"]["node_days"],
                )
            family = flag_family(ratios, f"{a} against {b}: r_f and each cause's rate")
            differ = any(t["flagged"] for t in family["tests"].values())
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "ratios": [{"measure": name, **ratio, **family["tests"][name]} for name, ratio in ratios.items()],
                    "differ": differ,
                    "tests_run": family["tests_counted"],
                    "verdict": verdict(family["tests_counted"], differ),
                }
            )
    return pairs
