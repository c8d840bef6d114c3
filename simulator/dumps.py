"""Each month of a simulated history written as the site has it on its report day: the Slurm and
node-health logs at the month's dump time, and its truth.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from simulator.history import History, run_history, without_gc
from simulator.params import MonthWindow, SimParams
from simulator.repairs import HEALTH_LOG_LEAD
from simulator.truth import AttemptColumns, history_truth, month_truth
from simulator.writers.dcgm_health import write_dcgm_checks
from simulator.writers.nhc_log import write_nhc_log
from simulator.writers.sacct import write_sacct
from simulator.writers.sacctmgr_events import write_events
from simulator.writers.xid_syslog import write_xid_log


def write_month(
    history: History, w: MonthWindow, columns: AttemptColumns, out_dir: Path, cpu: AttemptColumns | None = None
) -> dict:
    """Write the month's logs as the site has them at its dump time, and its truth.json; return the
    truth. `cpu`: the CPU-only attempts' columns (a mixed cluster). With `sources = "jobs_only"` the
    dump holds only the job records."""
    ctx, clock, names = history.ctx, history.clock, history.node_names
    out_dir.mkdir(parents=True, exist_ok=True)
    shown = [ctx.attempts[i] for i in np.flatnonzero(columns.in_dump(w)).tolist()]
    if cpu is not None and history.cpu is not None:
        shown += [history.cpu.attempts[i] for i in np.flatnonzero(cpu.in_dump(w)).tolist()]
    write_sacct(out_dir / "sacct.psv", shown, ctx.params, names, clock, w.as_of)
    truth = month_truth(history, w, columns, cpu)
    if ctx.params.sources == "jobs_only":
        _write_json(out_dir / "truth.json", truth)
        return truth
    # the node logs of the calendar month (a job-record dump's window is not theirs), or from `health_starts`
    lo = clock.seconds(w.month.start) - HEALTH_LOG_LEAD
    if (health_starts := ctx.params.health_start_time) is not None and w.month == ctx.params.first:
        lo = max(lo, clock.seconds(health_starts))
    write_events(out_dir / "events.psv", ctx.signals.events, ctx.params, names, clock, lo, w.as_of)
    write_xid_log(out_dir / "xid.log", ctx.signals.xids, names, clock, lo, w.as_of)
    write_nhc_log(out_dir / "nhc.log", ctx.signals.nhc, names, clock, lo, w.as_of)
    write_dcgm_checks(out_dir, ctx.signals.dcgm, names, clock, lo, w.as_of)
    _write_json(out_dir / "truth.json", truth)
    return truth


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")


def simulate(params: SimParams, out_dir: Path) -> dict:
    """Simulate `params.month` .. `params.last_month` as one history and write each month's logs.

    One month: its files and truth.json directly in `out_dir`; returns its truth. Several: one
    directory `out_dir/YYYY-MM` per month, plus `out_dir/truth.json` for the whole history (which
    it returns, with every month's truth under "months").
    """
    with without_gc():  # the history is gone when the collector is back on: it has only the truth to look at
        return _simulate(params, Path(out_dir))


def _simulate(params: SimParams, out_dir: Path) -> dict:
    history = run_history(params)
    columns = AttemptColumns(history.ctx.attempts)
    cpu = AttemptColumns(history.cpu.attempts) if history.cpu is not None else None
    if len(history.windows) == 1:
        return write_month(history, history.windows[0], columns, out_dir, cpu)
    per_month = {str(w.month): write_month(history, w, columns, out_dir / str(w.month), cpu) for w in history.windows}
    whole = history_truth(history, per_month, columns)
    _write_json(out_dir / "truth.json", whole)
    return whole
