"""Effective training time ratio (ETTR): the paper's expected-value model and a Monte Carlo check.

Definitions: docs/methodology.md ("Expected ETTR and the Young-Daly interval"). A job on N nodes fails at rate lambda = N x r_f
(a series system of nodes). Each interruption costs the restart overhead u0, the queue wait q and
on average half a checkpoint interval of lost work; writing a checkpoint costs w_cp every
interval:

    E[ETTR] = (1 - lambda x (u0 + q + ckpt / 2)) / (1 + w_cp / ckpt)

The formula is first order in lambda: the paper finds it within 5% of a Monte Carlo when the
job's mean time between failures is at least 0.1 day (`formula_is_valid`). The optimal interval is Young-Daly's sqrt(2 w_cp / lambda). All times are in minutes.
"""

from __future__ import annotations

import math

import numpy as np

MINUTES_PER_DAY = 1440.0


def failure_rate_per_minute(nodes: float, r_f_per_1000_node_days: float) -> float:
    """lambda: failures per minute of a job on `nodes` nodes."""
    return nodes * r_f_per_1000_node_days / 1000.0 / MINUTES_PER_DAY


def expected_ettr(
    gpus: float,
    r_f_per_1000_node_days: float,
    gpus_per_node: int,
    ckpt_minutes: float,
    u0_minutes: float,
    q_minutes: float = 0.0,
    w_cp_minutes: float = 0.0,
) -> float:
    """The paper's E[ETTR] for a job of `gpus` GPUs; clipped at 0 where the first-order formula
    breaks down (more lost time than time)."""
    lam = failure_rate_per_minute(gpus / gpus_per_node, r_f_per_1000_node_days)
    value = (1.0 - lam * (u0_minutes + q_minutes + ckpt_minutes / 2.0)) / (1.0 + w_cp_minutes / ckpt_minutes)
    return max(value, 0.0)


def optimal_checkpoint_minutes(gpus: float, r_f_per_1000_node_days: float, gpus_per_node: int, w_cp_minutes: float):
    """Young-Daly: sqrt(2 w_cp / lambda); None without a checkpoint cost (then shorter is always better)."""
    lam = failure_rate_per_minute(gpus / gpus_per_node, r_f_per_1000_node_days)
    if w_cp_minutes <= 0 or lam <= 0:
        return None
    return math.sqrt(2.0 * w_cp_minutes / lam)


def formula_is_valid(gpus: float, r_f_per_1000_node_days: float, gpus_per_node: int, ckpt_minutes: float) -> bool:
    """The paper's validity range: the job's mean time between failures is at least 0.1 day and
    longer than the checkpoint interval (lambda x ckpt < 1)."""
    lam = failure_rate_per_minute(gpus / gpus_per_node, r_f_per_1000_node_days)
    return lam * 0.1 * MINUTES_PER_DAY <= 1.0 and lam * ckpt_minutes < 1.0


def monte_carlo_ettr(
    gpus: float,
    r_f_per_1000_node_days: float,
    gpus_per_node: int,
    ckpt_minutes: float,
    u0_minutes: float,
    q_minutes: float = 0.0,
    w_cp_minutes: float = 0.0,
    work_days: float = 30.0,
    runs: int = 20,
    seed: int = 0,
) -> float:
    """ETTR of simulated runs of the same process: `work_days` of training, a checkpoint written
    (taking w_cp) after every ckpt of progress, failures arriving at rate lambda while the job
    runs; a failure loses the progress since the last checkpoint and costs u0 + q to resume.
    Returns total productive time / total wall time over `runs` runs."""
    lam = failure_rate_per_minute(gpus / gpus_per_node, r_f_per_1000_node_days)
    rng = np.random.default_rng(seed)
    work = work_days * MINUTES_PER_DAY
    productive = wall = 0.0
    for _ in range(runs):
        done = 0.0
        while done < work:
            segment = min(ckpt_minutes, work - done)
            cost = segment + (w_cp_minutes if done + segment < work else 0.0)
            until_failure = rng.exponential(1.0 / lam) if lam > 0 else math.inf
            if until_failure >= cost:
                wall += cost
                done += segment
            else:
                wall += until_failure + u0_minutes + q_minutes
        productive += work
    return productive / wall
