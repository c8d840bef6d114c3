"""The ETTR model against the paper's worked numbers, and against a Monte Carlo of the same process."""

import pytest

from flows.figures.ettr import expected_ettr, formula_is_valid, monte_carlo_ettr, optimal_checkpoint_minutes

RSC1 = 6.50  # failures per 1000 node-days


@pytest.mark.parametrize(
    ("gpus", "ckpt", "q", "paper"),
    [
        (16000, 60, 0, 0.684),  # the paper's "16k-GPU job" (2,000 nodes)
        (16000, 5, 0, 0.932),
        (16384, 60, 0, 0.676),
        (16384, 5, 0, 0.931),
        (2048, 60, 0, 0.960),
        (4096, 60, 0, 0.919),
        (8000, 30, 1, 0.905),  # the paper's "0.9" with 1 min of queueing per interruption
    ],
)
def test_the_papers_worked_numbers(gpus: int, ckpt: float, q: float, paper: float):
    assert expected_ettr(gpus, RSC1, 8, ckpt_minutes=ckpt, u0_minutes=5, q_minutes=q) == pytest.approx(paper, abs=5e-4)


@pytest.mark.parametrize(
    ("gpus", "ckpt", "q", "w_cp"),
    [(1024, 60, 0, 0), (2048, 60, 0, 0), (4096, 60, 0, 0), (8000, 30, 1, 0), (4096, 30, 2, 1)],
)
def test_monte_carlo_agrees_with_the_formula_where_it_is_valid(gpus: int, ckpt: float, q: float, w_cp: float):
    formula = expected_ettr(gpus, RSC1, 8, ckpt_minutes=ckpt, u0_minutes=5, q_minutes=q, w_cp_minutes=w_cp)
    simulated = monte_carlo_ettr(
        gpus, RSC1, 8, ckpt_minutes=ckpt, u0_minutes=5, q_minutes=q, w_cp_minutes=w_cp, work_days=20, runs=10, seed=7
    )
    assert formula_is_valid(gpus, RSC1, 8, ckpt)
    assert simulated == pytest.approx(formula, rel=0.05)


def test_where_the_formula_is_not_valid_it_is_flagged():
    # the paper's 16k-GPU job at 60 min: lambda x ckpt = 0.54, far from << 1
    assert not formula_is_valid(16000, RSC1, 8, 60)


def test_young_daly_optimum_maximises_the_expected_ettr():
    best = optimal_checkpoint_minutes(4096, RSC1, 8, w_cp_minutes=1.0)
    assert best == pytest.approx(((2 * 1.0) / (512 * RSC1 / 1000 / 1440)) ** 0.5)
    at_best = expected_ettr(4096, RSC1, 8, ckpt_minutes=best, u0_minutes=5, w_cp_minutes=1.0)
    for other in (best / 2, best * 0.8, best * 1.25, best * 2):
        assert expected_ettr(4096, RSC1, 8, ckpt_minutes=other, u0_minutes=5, w_cp_minutes=1.0) < at_best
    assert optimal_checkpoint_minutes(4096, RSC1, 8, w_cp_minutes=0) is None
