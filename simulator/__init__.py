"""A cluster simulator with ground truth: one continuous multi-month history of a GPU cluster, written as
the Slurm and node-health logs a site has on each month's report day (see docs/simulator.md).

    from simulator import CalendarMonth, SimParams, simulate
    truth = simulate(SimParams("c", CalendarMonth(2026, 10), nodes=48, seed=11), out_dir)

A month is any value with `year` and `month` (the pipeline's Month too).
"""

from simulator.catalog import CAUSE_NAMES
from simulator.dumps import simulate
from simulator.history import run_history
from simulator.hostlist import fold_hostlist
from simulator.params import CalendarMonth, SimParams
from simulator.writers.dcgm_health import dcgm_health_json

__all__ = ["CAUSE_NAMES", "CalendarMonth", "SimParams", "dcgm_health_json", "fold_hostlist", "run_history", "simulate"]
