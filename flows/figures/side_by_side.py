"""A study's clusters side by side: their tables joined by each row's key (a cause, a size bucket,
a month, a projection size), never by position, and the rows they share (every cause any cluster
had, every size bucket with a measured ETTR). Not written into the study's metrics.json, where each
number is its cluster's once: its document joins them when read (flows/figures/document.py
StudyDocument.side_by_side, causes, ettr_buckets)."""

from __future__ import annotations

from flows.figures.measured import FIGURES


def ettr_buckets(clusters: dict[str, dict]) -> list[str]:
    """Every size bucket with a measured ETTR at some cluster (its highest-priority runs), by size."""
    buckets: dict[str, int] = {}
    for figures in clusters.values():
        buckets |= {r["size_bucket"]: r["bucket_order"] for r in figures["ettr_vs_expected"]["priority"]}
    return sorted(buckets, key=buckets.__getitem__)


def cause_order(clusters: dict[str, dict]) -> list[str]:
    """Every cause any cluster had: the first cluster's in its order (most failures first), then the others'."""
    causes: list[str] = []
    for figures in clusters.values():
        causes += [c["category"] for c in figures["failures_by_cause"] if c["category"] not in causes]
    return causes


MTTF_CELL = ("mttf_hours", "mttf_lower_hours", "mttf_upper_hours")  # a cluster's MTTF at a size, side by side
LOST_CELL = ("lost_gpu_hours", "second_order_gpu_hours", "second_order_preemptions")  # its lost goodput there
CAUSE_CELL = (
    "failures",
    "per_1000_node_days",
    "per_1000_node_days_lower",
    "per_1000_node_days_upper",
)  # its failures of a cause and their rate
# its highest-priority runs of a size against E[ETTR]
ETTR_CELL = ("runs", "mean_ettr", "mean_lower", "mean_upper", "expected_ettr", "model_applies")


def _by_size(clusters: dict[str, list[dict]], shown: str, cell: tuple[str, ...]) -> list[dict]:
    """Each size bucket of the clusters' rows (cluster -> its rows of a figure) where some cluster's
    `shown` is non-zero, by bucket order, with each cluster's `cell` of its row for that bucket
    (null where the cluster has no row for it: none there, or the figure is not measured there)."""
    rows = {name: {r["size_bucket"]: r for r in figure} for name, figure in clusters.items()}
    buckets = {b: r["bucket_order"] for by in rows.values() for b, r in by.items() if r[shown]}
    return [
        {
            "size_bucket": bucket,
            "clusters": {name: {k: by[bucket][k] for k in cell} if bucket in by else None for name, by in rows.items()},
        }
        for bucket in sorted(buckets, key=buckets.__getitem__)
    ]


# The fewest GPU attempts a cluster needs in the range before the report says where most of them are
MIN_SHAPE_ATTEMPTS = 100


def paper_job_mix_shape(job_mix_by_size: list) -> bool:
    """Whether every cluster's job mix has the paper's Fig. 3 shape, on at least MIN_SHAPE_ATTEMPTS GPU
    attempts: its median attempt in a smaller size bucket than its median GPU-hour (most attempts
    small, most GPU-hours in large jobs). `job_mix_by_size`: side_by_side's rows, smallest bucket
    first, as dicts or the document's rows."""
    rows = [row if isinstance(row, dict) else row.model_dump() for row in job_mix_by_size]
    if not rows:
        return False

    def median_bucket(counts: list[float]) -> int:
        total, running = sum(counts), 0.0
        return next(i for i, count in enumerate(counts) if (running := running + count) >= total / 2)

    for name in rows[0]["clusters"]:
        attempts = [row["clusters"][name]["attempts"] for row in rows]
        hours = [row["clusters"][name]["gpu_hours"] or 0.0 for row in rows]
        if sum(attempts) < MIN_SHAPE_ATTEMPTS or not sum(hours) or median_bucket(attempts) >= median_bucket(hours):
            return False
    return True


def side_by_side(clusters: dict[str, dict]) -> dict:
    """The clusters' tables joined by their rows' key, never by position (one cluster's months or
    size buckets may be fewer than another's, or none):
    - `job_mix_by_size`: each size bucket any cluster ran an attempt in, by bucket order, with each
      cluster's attempts and GPU-hours there (0 where it ran none: a count its job records give);
    - `monthly`: each month any cluster has a row for, oldest first, with each cluster's r_f (all);
      a cluster without a row that month has no GPU node-days in it: not measured, with why;
    - `trend_measured`: whether any of those r_f is measured (else the study has no trend chart);
    - `mttf_by_size`: each size bucket some cluster ran GPU jobs in, with each cluster's observed
      MTTF there (null: the cluster did not measure MTTF by size);
    - `projections`: each projection size, with each cluster's model MTTF there under the r_f its
      models use (null: not measured);
    - `lost_goodput_by_size`: each size bucket some cluster lost GPU-hours in, with each cluster's
      lost and second-order GPU-hours there (null: not measured);
    - `failures_by_cause`: each cause any cluster had (`cause_order`), with each cluster's failures
      of it and their rate (null: none, or failures by cause not measured);
    - `ettr_by_size`: each size bucket with highest-priority long runs at some cluster, with each
      cluster's runs there, their mean ETTR and E[ETTR] (null: none, or ETTR not measured);
    - `expected_ettr`: each projection size, with each cluster's E[ETTR] at its configured
      checkpoint interval at each restart overhead and the optimal interval (null: r_f not measured);
    - `unmeasured_everywhere`: the figure paths no cluster measured (their tables are left out)."""
    sizes: dict[str, int] = {}
    for figures in clusters.values():
        sizes |= {r["size_bucket"]: r["bucket_order"] for r in figures.get("job_mix_by_size", []) if r["attempts"]}
    by_size = {
        name: {r["size_bucket"]: r for r in figures.get("job_mix_by_size", [])} for name, figures in clusters.items()
    }
    by_month = {name: {r["month"]: r["all"] for r in figures["monthly"]} for name, figures in clusters.items()}
    months = sorted({month for rows in by_month.values() for month in rows})
    none = {"value": None, "lower": None, "upper": None}
    by_gpus = {
        name: {
            p["gpus"]: p[f"mttf_hours_{figures['ettr_vs_expected']['r_f_definition']}"] for p in figures["projections"]
        }
        for name, figures in clusters.items()
    }
    return {
        # the figures no cluster measured: their side-by-side tables would be all "not measured"
        "unmeasured_everywhere": [
            path for path in FIGURES if all(path in figures.get("not_measured", {}) for figures in clusters.values())
        ],
        # whether any cluster's r_f is measured in any month (else the trend has nothing to draw)
        "trend_measured": any(r["value"] is not None for rows in by_month.values() for r in rows.values()),
        "job_mix_by_size": [
            {
                "size_bucket": bucket,
                "clusters": {
                    name: {k: rows.get(bucket, {}).get(k, 0) for k in ("attempts", "gpu_hours")}
                    for name, rows in by_size.items()
                },
            }
            for bucket in sorted(sizes, key=sizes.__getitem__)
        ],
        "mttf_by_size": _by_size(_figure(clusters, "mttf_by_size"), "runtime_hours", MTTF_CELL),
        "projections": [
            {
                "gpus": gpus,
                "clusters": {
                    name: {"mttf_hours": projected[gpus]} if gpus in projected else None
                    for name, projected in by_gpus.items()
                },
            }
            for gpus in sorted({gpus for projected in by_gpus.values() for gpus in projected})
        ],
        "lost_goodput_by_size": _by_size(_figure(clusters, "lost_goodput_by_size"), "lost_gpu_hours", LOST_CELL),
        **_causes_and_ettr(clusters),
        "monthly": [
            {
                "month": month,
                "clusters": {
                    name: rows.get(month) or none | {"not_measured": f"no GPU node-days in {month}"}
                    for name, rows in by_month.items()
                },
            }
            for month in months
        ],
    }


def _causes_and_ettr(clusters: dict[str, dict]) -> dict:
    """side_by_side's `failures_by_cause`, `ettr_by_size` and `expected_ettr` (the clusters' causes,
    highest-priority runs and E[ETTR] at the configured interval, joined by cause and by size)."""
    causes = {name: {c["category"]: c for c in figures["failures_by_cause"]} for name, figures in clusters.items()}
    grids = {name: _grid_at_interval(figures) for name, figures in clusters.items()}
    return {
        "failures_by_cause": [
            {
                "category": cause,
                "clusters": {
                    name: {k: by[cause][k] for k in CAUSE_CELL} if cause in by else None for name, by in causes.items()
                },
            }
            for cause in cause_order(clusters)
        ],
        "ettr_by_size": _by_size(
            {name: figures["ettr_vs_expected"]["priority"] for name, figures in clusters.items()}, "runs", ETTR_CELL
        ),
        "expected_ettr": [
            {"gpus": gpus, "clusters": {name: (cells or {}).get(gpus) for name, cells in grids.items()}}
            for gpus in dict.fromkeys(gpus for cells in grids.values() for gpus in cells or {})
        ],
    }


def _figure(clusters: dict[str, dict], figure: str) -> dict[str, list[dict]]:
    """Each cluster's rows of a list figure."""
    return {name: figures[figure] for name, figures in clusters.items()}


def _grid_at_interval(figures: dict) -> dict[int, dict] | None:
    """A cluster's E[ETTR] of each projection size (expected_ettr_grid) at its configured checkpoint
    interval at each restart overhead (null where the interval is not among ettr_curve_minutes),
    with the size's optimal interval; None where its r_f (all) is not measured."""
    if figures["node_failure_rate"]["all"].get("not_measured"):
        return None
    grid, configured = figures["expected_ettr_grid"], figures["parameters"]["ckpt_interval_minutes"]
    return {
        optimum["gpus"]: {
            "at_interval": [
                next(
                    ({"ettr": p["ettr"], "valid": p["valid"]} for p in c["points"] if p["ckpt_minutes"] == configured),
                    None,
                )
                for c in grid["curves"]
                if c["gpus"] == optimum["gpus"]
            ],
            "optimal_ckpt_minutes": optimum["minutes"],
        }
        for optimum in grid["optimal_ckpt_minutes"]
    }
