"""The paper's models under a period's node failure rate r_f: MTTF(N) of a job of N GPUs and its
expected ETTR against the checkpoint interval (flows/figures/ettr.py), for the report's sizes."""

from __future__ import annotations

from flows.config.cluster import AnalysisConfig
from flows.figures.ettr import expected_ettr, formula_is_valid, optimal_checkpoint_minutes

# E[ETTR] of large hypothetical jobs in a study (the paper's Fig. 10) at these multiples of the configured u0
RESTART_OVERHEAD_FACTORS = (1, 2, 4)


def model_mttf_hours(gpus: int, r_f_per_1000: float | None, gpus_per_node: int) -> float | None:
    """MTTF(N) = 1 / ((N / gpus_per_node) x r_f), in hours."""
    if not r_f_per_1000:
        return None
    return 24 / ((gpus / gpus_per_node) * r_f_per_1000 / 1000)


def projections(r_f: dict, params: AnalysisConfig) -> list[dict]:
    """The model's MTTF of the projection sizes under each r_f."""
    return [
        {
            "gpus": n,
            **{f"mttf_hours_{k}": model_mttf_hours(n, v["value"], params.gpus_per_node) for k, v in r_f.items()},
        }
        for n in params.projection_gpus
    ]


def model_rate(r_f: dict) -> tuple[str, float | None]:
    """The r_f the ETTR model uses: the paper's definition when it has exposure, else every GPU job's."""
    definition = "paper" if r_f["paper"]["value"] else "all"
    return definition, r_f[definition]["value"]


def model_ettr(gpus: float, rate: float, params: AnalysisConfig, ckpt_minutes: float, restart_minutes: float) -> float:
    """E[ETTR] of a job of `gpus` GPUs at r_f `rate`, with the configured queue wait and checkpoint write."""
    return expected_ettr(
        gpus,
        rate,
        params.gpus_per_node,
        ckpt_minutes,
        restart_minutes,
        params.queue_after_failure_minutes,
        params.ckpt_write_minutes,
    )


def ettr_curve(gpus: int, rate: float | None, params: AnalysisConfig, restart_minutes: float) -> list[dict]:
    """E[ETTR] of a job of `gpus` GPUs at each of the configured checkpoint intervals, and whether
    the first-order formula holds there (none without a rate)."""
    if not rate:
        return []
    return [
        {
            "ckpt_minutes": minutes,
            "ettr": model_ettr(gpus, rate, params, minutes, restart_minutes),
            "valid": formula_is_valid(gpus, rate, params.gpus_per_node, minutes),
        }
        for minutes in params.ettr_curve_minutes
    ]


def optimal_ckpt_minutes(gpus: int, rate: float | None, params: AnalysisConfig) -> float | None:
    """Young-Daly's checkpoint interval of a job of `gpus` GPUs (none without a rate)."""
    return optimal_checkpoint_minutes(gpus, rate, params.gpus_per_node, params.ckpt_write_minutes) if rate else None


def expected_ettr_curves(r_f: dict, params: AnalysisConfig) -> dict:
    """A month's E[ETTR] against the checkpoint interval at each projection size, at the configured u0."""
    definition, rate = model_rate(r_f)
    curves = [
        {
            "gpus": gpus,
            "points": ettr_curve(gpus, rate, params, params.restart_overhead_minutes),
            "optimal_ckpt_minutes": optimal_ckpt_minutes(gpus, rate, params),
        }
        for gpus in params.projection_gpus
    ]
    # the same points an interval a row (each curve has a point at each interval, or none without a rate)
    by_interval = [
        {
            "ckpt_minutes": point["ckpt_minutes"],
            "curves": [{k: c["points"][i][k] for k in ("ettr", "valid")} for c in curves],
        }
        for i, point in enumerate(curves[0]["points"] if curves else [])
    ]
    return {"r_f_definition": definition, "r_f": rate, "curves": curves, "by_interval": by_interval}


def expected_ettr_grid(r_f: dict, params: AnalysisConfig) -> dict:
    """A study's E[ETTR] of large hypothetical jobs against the checkpoint interval, at the
    configured restart overhead u0 and multiples of it (the paper's Fig. 10)."""
    definition, rate = model_rate(r_f)
    overheads = [params.restart_overhead_minutes * f for f in RESTART_OVERHEAD_FACTORS]
    curves = [
        {"gpus": gpus, "restart_overhead_minutes": u0, "points": ettr_curve(gpus, rate, params, u0)}
        for gpus in params.projection_gpus
        for u0 in overheads
    ]
    return {
        "r_f_definition": definition,
        "r_f": rate,
        "restart_overheads_minutes": overheads,
        "curves": curves,
        "optimal_ckpt_minutes": [
            {"gpus": gpus, "minutes": optimal_ckpt_minutes(gpus, rate, params)} for gpus in params.projection_gpus
        ],
    }
