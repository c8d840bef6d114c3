"""What the report says first: the headline figures with their month-over-month change, a
plain-language sentence on what changed, and whether the data can be trusted. Computed here, from
metrics.json alone, so the templates only format (the number formats: flows/figures/formats.py)."""

from __future__ import annotations

from collections.abc import Sequence

from flows.core.months import Month
from flows.core.words import counted
from flows.figures.figure_types import Headline
from flows.figures.formats import FORMATS, fmt_change, fmt_dec, fmt_num, fmt_pct, label, month_name, month_spans
from flows.figures.measured import coverage, from_job_states_only
from flows.figures.registry import sentence_names


def listed_candidates(lemon_nodes: dict) -> list[dict]:
    """The nodes the month lists: the candidates of its own window, then those only the trailing
    window finds, each of these with the trailing `window_days`. The report's summary, its counts
    and the drain script all list these."""
    listed = list(lemon_nodes["candidates"])
    seen = {c["node"] for c in listed}
    trailing = lemon_nodes.get("trailing")
    if trailing:
        listed += [
            {**c, "window_days": trailing["window_days"]} for c in trailing["candidates"] if c["node"] not in seen
        ]
    return listed


def _names(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


# A failed expectation (expectations/*.json) in words, the one place (the report's data-quality reasons and
# the archive's month cards): by (suite, type) for the warning-severity ones, else by the expectation type.
CHECK_WORDS = {
    ("landed_attempts", "expect_table_row_count_to_be_between"): "no job record of this month was landed",
    ("fct_attempts", "expect_table_row_count_to_be_between"): "no job attempt this month",
    ("dim_nodes", "expect_table_row_count_to_be_between"): "no node ran a job this month",
    ("fct_node_days", "expect_table_row_count_to_be_between"): "no node-day of exposure this month",
    (
        "landed_attempts",
        "expect_column_pair_values_a_to_be_greater_than_b",
    ): "job records that start before they were submitted, as a requeue leaves them on some Slurm versions",
    ("node_names", "expect_column_values_to_be_null"): "{findings}",  # each source's, in words
    ("health_event_hosts", "expect_column_values_to_be_null"):  # its suite before node_names (a month built so)
    "health events whose host is no node of the month, each counted as a node of its own",
    (
        "health_events_classified",
        "expect_column_values_to_be_between",
    ): "over 20% of the health events match no rule of the failure taxonomy, dbt_project/seeds/failure_taxonomy.csv",
    (
        "attempt_node_lists",
        "expect_column_pair_values_to_be_equal",
    ): "job records whose node list does not hold NNodes nodes, the list or the count mangled on the way",
    "expect_table_row_count_to_be_between": "{table}: a row count outside the expected range",
    "expect_column_values_to_be_between": "{table}: {column} outside its expected range",
    "expect_column_values_to_be_in_set": "{table}: {column} outside its expected values",
    "expect_column_values_to_not_be_in_set": "{table}: {column} with a value it must not have",
    "expect_column_values_to_not_be_null": "{table}: {column} missing",
    "expect_column_values_to_be_null": "{table}: {column} set where it must be empty",
    "expect_column_pair_values_a_to_be_greater_than_b": "{table}: two columns out of order",
    "expect_column_pair_values_to_be_equal": "{table}: two columns that must agree differ",
    "expect_column_distinct_values_to_contain_set": "{table}: {column} lacks a value it must have",
}


def check_words(suite: str, failed: dict) -> str:
    """A failed expectation of metrics.json's data_quality in words, with how many rows it concerns."""
    kind, specific = failed["expectation"], CHECK_WORDS.get((suite, failed["expectation"]))
    words = specific or CHECK_WORDS.get(kind, "{table}: " + label(kind) + " on {column}")
    findings = "; ".join(str(finding) for finding in failed.get("sample") or [])  # rows that are findings in words
    text = words.format(table=label(suite), column=label(failed.get("column") or "a column"), findings=findings)
    if "{findings}" in words:
        return text
    if failed.get("unexpected_count"):
        return f"{text} ({counted(failed['unexpected_count'], 'row', number=fmt_num(failed['unexpected_count']))})"
    if failed.get("observed") is not None and not (specific and kind == "expect_table_row_count_to_be_between"):
        return f"{text} (observed {failed['observed']})"
    return text


def data_quality(metrics: dict) -> dict:
    """`failed` when a critical expectation failed (the figures are not to be trusted), `warning`
    when something should be checked before relying on them, else `ok`; with the reasons and the
    suites' expectations `evaluated` and `successful` in all."""
    failed, warnings = [], []
    for suite in metrics.get("data_quality", []):
        for status, items in (("failed", suite["failures"]), ("warning", suite["warnings"])):
            for f in items:
                (failed if status == "failed" else warnings).append(check_words(suite["suite"], f))
    quarantined = sum(s.get("quarantined") or 0 for s in metrics.get("inputs", {}).values())
    if quarantined:
        were = "was" if quarantined == 1 else "were"
        warnings.append(f"{counted(quarantined, 'input row')} could not be read and {were} left out (quarantined)")
    conflicting = sum(s.get("conflicting_attempts") or 0 for s in metrics.get("inputs", {}).values())
    if conflicting:
        warnings.append(
            f"{counted(conflicting, 'attempt')} {'was' if conflicting == 1 else 'were'} recorded twice with a "
            "different outcome or times "
            "(the later End, else the later line, landed)"
        )
    if metrics.get("no_jobs_declared"):
        pass  # the report says no job ran, in place of the figures
    elif thin := metrics.get("not_measured", {}).get("node_failure_rate.all"):
        # any GPU exposure below [analysis] min_gpu_node_days, not only none (flows/figures/measured.py)
        warnings.append(f"{thin}, so it has no failure rate, MTTF, ETTR or lost goodput")
    elif not metrics["node_failure_rate"]["all"]["node_days"]:  # a metrics.json from before not_measured
        warnings.append("no GPU exposure this month: no GPU job ran, so it has no failure rate, MTTF or ETTR")
    if metrics["totals"].get("unknown_states"):
        unknown = metrics["totals"]["unknown_states"]
        warnings.append(
            f"{counted(unknown, 'attempt')} {'has' if unknown == 1 else 'have'} a Slurm state not recognised"
        )
    for name, source in metrics.get("inputs", {}).items():
        if source.get("exit_codes_unreliable"):
            warnings.append(f"{name}: this Slurm version's JSON loses non-zero exit codes")
    status = "failed" if failed else "warning" if warnings else "ok"
    suites = metrics.get("data_quality", [])
    return {
        "status": status,
        "reasons": failed + warnings,
        "evaluated": sum(suite["evaluated"] for suite in suites),
        "successful": sum(suite["successful"] for suite in suites),
    }


def _previous(metrics: dict, definition: str) -> float | None:
    before = str(Month.parse(metrics["month"]).previous())
    row = next((r for r in metrics["history"]["monthly"] if r["month"] == before), None)
    return row[definition]["value"] if row else None


# the figure of metrics.json each headline figure shows (its path in `not_measured`): a headline
# figure is not measured exactly where its figure is, with the same reason
HEADLINE_FIGURES = {
    "r_f_paper": "node_failure_rate.paper",
    "r_f_all": "node_failure_rate.all",
    "infra_failures": "totals.infra_failures",
    "projected_mttf": "projections",
    "lost_goodput": "lost_goodput",
    "lemon_candidates": "lemon_nodes",
}


def headline_figure(item: Headline) -> str:
    """A headline figure in plain text as the report shows it: value and unit, and the change against last month."""
    if item.not_measured:
        return f"not measured: {item.not_measured}"
    show = FORMATS[item.format]
    text = f"{show(item.value)} {item.unit}"
    if item.change is not None:
        text += f" ({fmt_change(item.change)} vs {show(item.previous)})"
    return text


def counts_line(metrics: dict) -> str:
    """The month's attempts and infrastructure failures in a line, as the console, the stage's
    progress line and a backfill's outcomes print it: "not measured" and why where metrics.json says so."""
    failures = metrics["totals"]["infra_failures"]
    why = metrics.get("not_measured", {}).get("totals.infra_failures")
    if why or failures is None:
        said = "infrastructure failures not measured" + (f": {why}" if why else "")
    else:
        said = counted(failures, "infrastructure failure")
    return f"{counted(metrics['totals']['attempts'], 'attempt')}, {said}"


def headline_lines(headline: list[Headline]) -> list[str]:
    """The headline figures (a document's summary's) as plain lines ("label: figure"), for a chat message."""
    return [f"{h.label}: {headline_figure(h)}" for h in headline]


def headline(metrics: dict) -> list[dict]:
    """The figures at the top, each with `format` (num, dec, duration, pct) and, where the previous
    month is known, `previous` and the relative `change` (r_f all also with its Poisson test)."""
    rf = metrics["node_failure_rate"]
    mom = metrics["month_over_month"]
    params = metrics["parameters"]
    gaps = metrics.get("not_measured", {})
    totals = metrics["totals"]
    paper_previous = _previous(metrics, "paper")
    paper_change = (
        (rf["paper"]["value"] - paper_previous) / paper_previous
        if paper_previous and rf["paper"]["value"] is not None
        else None
    )
    items = [
        {
            "key": "r_f_paper",
            "label": f"Node failure rate, jobs > {params['paper_min_gpus']} GPUs (paper)",
            "value": rf["paper"]["value"],
            "lower": rf["paper"]["lower"],
            "upper": rf["paper"]["upper"],
            "unit": "per 1000 node-days",
            "format": "dec",
            "previous": paper_previous,
            "change": paper_change,
            "trend": "same",  # untested: the month-over-month test is on the all-jobs rate
        },
        {
            "key": "r_f_all",
            "label": "Node failure rate, all GPU jobs",
            "value": rf["all"]["value"],
            "lower": rf["all"]["lower"],
            "upper": rf["all"]["upper"],
            "unit": "per 1000 node-days",
            "format": "dec",
            "previous": mom["previous"],
            "change": mom["change"],
            "p_value": mom["p_value"],
            "significant": mom["significant"],
            # coloured only when the Poisson test says the change is more than chance
            "trend": ("worse" if mom["change"] > 0 else "better") if mom["significant"] and mom["change"] else "same",
        },
        {
            "key": "infra_failures",
            "label": "Infrastructure failures",
            "value": totals["infra_failures"],  # null where no GPU attempt ended: not "0 of 0 GPU attempts"
            # of GPU attempts where the marts count them (the GPU figures' attempts)
            "unit": "of GPU attempts"
            if "totals.infra_failures" in gaps
            else f"of {fmt_num(totals['gpu_attempts'])} GPU attempts"
            if totals.get("gpu_attempts") is not None
            else f"of {fmt_num(totals['attempts'])} attempts",
            "format": "num",
        },
    ]
    if metrics["projections"]:
        first = metrics["projections"][0]
        definition = metrics["expected_ettr"]["r_f_definition"]
        items.append(
            {
                "key": "projected_mttf",
                "label": f"Model MTTF of a {fmt_num(first['gpus'])}-GPU job",
                "value": first[f"mttf_hours_{definition}"],
                "unit": f"at this month's failure rate ({definition})",
                "format": "duration",
            }
        )
    items += _losses(metrics, gaps)
    # `not_measured` (why) only on a figure the month's inputs could not measure, its figure's reason:
    # then it has no value, whatever a metrics.json of before holds
    return [
        item | ({"value": None, "not_measured": why} if (why := gaps.get(HEADLINE_FIGURES[item["key"]])) else {})
        for item in items
    ]


def _losses(metrics: dict, gaps: dict[str, str]) -> list[dict]:
    """The headline's lost goodput and lemon-node candidates (not measured where `gaps` says so)."""
    lost = metrics["lost_goodput"]
    return [
        {
            "key": "lost_goodput",
            "label": "Lost goodput",
            "value": lost["lost_gpu_hours"],
            "unit": "GPU-hours"
            if "lost_goodput" in gaps
            else f"GPU-hours ({fmt_pct(lost['share_of_gpu_hours'])} of the month's)",
            "format": "num",
        },
        {
            "key": "lemon_candidates",
            "label": "Lemon-node candidates",
            "value": None if "lemon_nodes" in gaps else len(listed_candidates(metrics["lemon_nodes"])),
            "unit": "nodes" if "lemon_nodes" in gaps else f"of {fmt_num(metrics['lemon_nodes']['fleet_nodes'])} nodes",
            "format": "num",
        },
    ]


def _rate_sentence(metrics: dict) -> tuple[str, str]:
    """(trend, sentence) on the node failure rate over all GPU jobs against the previous month."""
    rf = metrics["node_failure_rate"]["all"]
    mom = metrics["month_over_month"]
    unit = "per 1000 node-days"
    if why := metrics.get("not_measured", {}).get("node_failure_rate.all"):
        # never "no failures" from too little exposure: how little was observed (flows/figures/measured.py)
        if why.startswith("no GPU job ran"):
            return "none", f"{why[0].upper()}{why[1:]}: the node failure rate, MTTF and ETTR are not measured."
        return "none", f"{why[0].upper()}{why[1:]}."
    if rf["value"] is None:
        return "none", "No GPU node-days this month, so there is no node failure rate."
    if rf["failures"] == 0:
        now = (
            f"No infrastructure failures this month: the node failure rate is below {fmt_dec(rf['upper'])} {unit} (95%)"
        )
    else:
        now = (
            f"The node failure rate over all GPU jobs is {fmt_dec(rf['value'])} {unit}"
            f" ({counted(rf['failures'], 'infrastructure failure', number=fmt_num(rf['failures']))})"
        )
    if mom["previous"] is None:
        return "none", f"{now}; there is no previous month to compare with."
    before = month_name(str(Month.parse(metrics["month"]).previous()))
    if mom["p_value"] is None:
        return "unchanged", f"{now}, as in {before}."
    if mom["change"] is None or mom["change"] == 0:
        direction = f"the same as in {before}"
    else:
        verb = "up" if mom["change"] > 0 else "down"
        direction = f"{verb} {fmt_change(abs(mom['change'])).lstrip('+')} from {fmt_dec(mom['previous'])} in {before}"
    if mom["significant"]:
        trend = "worse" if mom["change"] and mom["change"] > 0 else "better"
        return trend, f"{now}, {direction}: more than chance explains (p = {fmt_dec(mom['p_value'], 3)})."
    return "unchanged", f"{now}, {direction}: within what chance explains (p = {fmt_dec(mom['p_value'], 2)})."


def summarise(metrics: dict) -> dict:
    """The summary block of metrics.json: `text` (one plain-language line), `trend` (worse, better,
    unchanged or none), `data_quality` ({status, reasons, evaluated, successful}), the `headline` figures and
    `earlier_months` (what months before this one that are not built leave out, or none)."""
    if metrics.get("no_jobs_declared"):
        return {
            "text": no_jobs_text(metrics),
            "trend": "none",
            "data_quality": data_quality(metrics),
            "headline": [],
            "earlier_months": earlier_months_note(metrics),
            "coverage": [],
        }
    trend, text = _rate_sentence(metrics)
    causes = metrics["failures_by_cause"]
    if causes:
        total = sum(c["failures"] for c in causes)
        top = causes[0]
        text += f" Most common cause: {label(top['category'])} ({fmt_num(top['failures'])} of {fmt_num(total)})."
    lemons = [
        c["node"] + (f" (over {c['window_days']} days)" if "window_days" in c else "")
        for c in listed_candidates(metrics["lemon_nodes"])
    ]
    if lemons:
        text += f" Lemon-node candidate{'s' if len(lemons) > 1 else ''}: {_names(lemons)}."
    quality = data_quality(metrics)
    if quality["status"] == "failed":
        text = "Data-quality checks failed: do not trust these figures. " + text
    return {
        "text": text,
        "trend": trend,
        "data_quality": quality,
        "headline": headline(metrics),
        "earlier_months": earlier_months_note(metrics),
        "coverage": coverage_lines(metrics),
    }


def no_jobs_text(metrics: dict) -> str:
    """The report of a month the operator declared empty (`run --no-jobs-ran`): that, not figures."""
    cluster = metrics.get("cluster", "the cluster")
    return f"No job ran on {cluster} in {month_name(metrics['month'])} (the operator said so with --no-jobs-ran)."


# the figures of metrics.json's `not_measured` in the report's words (flows/figures/registry.py)
FIGURE_NAMES = sentence_names()


def coverage_lines(metrics: dict) -> list[str]:
    """What the figures leave out, a line each: the attempts without GPUs (not in the GPU figures),
    then the figures not measured, those with the same reason on one line."""
    lines = [line] if (line := coverage(metrics["totals"])) else []
    by_reason: dict[str, list[str]] = {}
    gaps = metrics.get("not_measured", {})
    for path in sorted(gaps, key=lambda p: list(FIGURE_NAMES).index(p) if p in FIGURE_NAMES else len(FIGURE_NAMES)):
        by_reason.setdefault(gaps[path], []).append(FIGURE_NAMES.get(path, label(path)))
    for why, names in by_reason.items():
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
        lines.append(f"Not measured: {listed}: {why}")
    if note := from_job_states_only(gaps):
        lines.append(note)
    return lines


def earlier_months_note(metrics: dict) -> str | None:
    """What the report leaves out when months before it are not built (none when all are)."""
    missing = metrics["history"]["earlier_months_missing"]
    if not missing:
        return None
    reach = len(missing) + sum(m["month"] < metrics["month"] for m in metrics["history"]["monthly"])
    if reach == 1:
        which = "the month before this one, which the trailing windows reach back to"
    elif len(missing) == reach:  # a first month: "11 of the 11" reads as a typo
        which = f"all {reach} months before this one that the trailing windows reach back to"
    else:
        which = f"{len(missing)} of the {reach} months before this one that the trailing windows reach back to"
    return (
        f"Not built: {month_spans(missing)} ({which}). Month-over-month change, the trailing windows, the trend and the "
        "job runs that began before this month count only the months built; building those months "
        "refreshes this report."
    )
