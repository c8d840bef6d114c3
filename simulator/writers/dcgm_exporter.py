"""NVIDIA dcgm-exporter's Xid series as a Prometheus scraping every node's exporter keeps them, from
the same Xids the syslog writer prints (relayed duplicate lines are the syslog's, not the GPU's).

Per GPU, every scrape (`step` seconds, on multiples of it since the epoch, as Prometheus aligns a
scrape interval): `DCGM_FI_DEV_XID_ERRORS`, the last Xid the GPU reported (0 before any), and per
GPU and Xid seen, `DCGM_EXP_XID_ERRORS_COUNT{xid=...}`, the Xids of that number in the last
`XID_COUNT_WINDOW` seconds (dcgm-exporter's --xid-count-window-size), reported while the window
holds one and once more as 0 when it empties. A scrape at time t shows the Xids of time <= t: an
Xid is first seen at the first scrape at or after it. Labels as a scrape of dcgm-exporter (3.3.6 or
later) gives them: gpu, UUID, pci_bus_id, device, modelName, Hostname, the gauge's `err_code` (its
value: each Xid starts a series of its own), and the scrape's job and instance.
`write_openmetrics` writes them as `promtool tsdb create-blocks-from openmetrics` reads them.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from pathlib import Path

from simulator.catalog import PCI_IDS
from simulator.history import History
from simulator.params import MonthWindow
from simulator.repairs import HEALTH_LOG_LEAD

XID_COUNT_WINDOW = 300
MODEL = "NVIDIA H100 80GB HBM3"
GAUGE = "DCGM_FI_DEV_XID_ERRORS"
COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
HELP = {
    GAUGE: "Value of the last XID error encountered.",
    COUNT: "Count of XID Errors within user-specified time window.",
}
TAIL = 2 * 3600  # the series run this long past the month's end (what a pull of the month reads)

Run = tuple[int, int, int]  # first and last scrape (epoch seconds) of a value, the value
Series = tuple[dict[str, str], list[Run]]


def _labels(node: str, gpu: int) -> dict[str, str]:
    return {
        "gpu": str(gpu),
        "UUID": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{node}.gpu{gpu}')}",
        "pci_bus_id": f"0000{PCI_IDS[gpu].upper()}.0",
        "device": f"nvidia{gpu}",
        "modelName": MODEL,
        "Hostname": node,
        "job": "dcgm-exporter",
        "instance": f"{node}:9400",
    }


def _scrape_of(at: int, step: int) -> int:
    """The first scrape (epoch seconds) at or after `at`."""
    return -(-at // step) * step


def _gauge_runs(xids: list[tuple[int, int]], first: int, last: int, step: int) -> list[Run]:
    """The last-Xid gauge's runs over the scrapes [first, last] from the GPU's (epoch, xid), in time order."""
    runs: list[Run] = []
    value, start = 0, first
    for at, xid in xids:
        shown = max(_scrape_of(at, step), first)
        if shown > last or xid == value:
            continue
        if shown > start:
            runs.append((start, shown - step, value))
        value, start = xid, shown
    runs.append((start, last, value))
    return [run for run in runs if run[0] <= run[1]]


def _count_runs(times: list[int], first: int, last: int, step: int) -> list[Run]:
    """The windowed count's runs over the scrapes [first, last] from the times (epoch) of one Xid of one GPU."""
    counts: dict[int, int] = defaultdict(int)
    for at in times:
        for scrape in range(_scrape_of(at, step), at + XID_COUNT_WINDOW, step):
            counts[scrape] += 1
    for scrape in list(counts):  # once more as 0 when the window empties
        if scrape + step not in counts:
            counts[scrape + step] = 0
    runs: list[Run] = []
    for scrape in sorted(s for s in counts if first <= s <= last):
        if runs and runs[-1][1] + step == scrape and runs[-1][2] == counts[scrape]:
            runs[-1] = (runs[-1][0], scrape, counts[scrape])
        else:
            runs.append((scrape, scrape, counts[scrape]))
    return runs


def exporter_series(history: History, w: MonthWindow, step: int) -> list[tuple[str, Series]]:
    """(metric, (labels, runs)) of every GPU of the GPU nodes over the scrapes from the hour before
    month `w` (as its health logs start) to TAIL past its end."""
    epoch = int(history.clock.t0.timestamp())
    first = _scrape_of(epoch + w.start - HEALTH_LOG_LEAD, step)
    last = (epoch + w.end + TAIL) // step * step
    per_gpu: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for t, node, xid, gpu, _, _ in sorted(set(history.ctx.signals.xids)):
        if t < w.end + TAIL:
            per_gpu[node, gpu].append((epoch + t, xid))
    gpus = history.ctx.params.gpus_per_node
    series: list[tuple[str, Series]] = []
    for node, name in enumerate(history.node_names):
        for gpu in range(gpus):
            runs = _gauge_runs(per_gpu[node, gpu], first, last, step)
            for value in dict.fromkeys(run[2] for run in runs):  # a series per err_code
                labels = {**_labels(name, gpu), "err_code": str(value)}
                series.append((GAUGE, (labels, [run for run in runs if run[2] == value])))
    for (node, gpu), xids in sorted(per_gpu.items()):
        for number in sorted({xid for _, xid in xids}):
            runs = _count_runs([at for at, xid in xids if xid == number], first, last, step)
            if runs:
                labels = {**_labels(history.node_names[node], gpu), "xid": str(number)}
                series.append((COUNT, (labels, runs)))
    return series


def write_openmetrics(path: Path, series: list[tuple[str, Series]], step: int) -> None:
    """The series as OpenMetrics, a sample per scrape of every run, each family's series together."""
    with open(path, "w") as out:
        for metric in (GAUGE, COUNT):
            out.write(f"# HELP {metric} {HELP[metric]}\n# TYPE {metric} gauge\n")
            for name, (labels, runs) in series:
                if name != metric:
                    continue
                text = ",".join(f'{key}="{value}"' for key, value in labels.items())
                prefix = f"{metric}{{{text}}} "
                for first, last, value in runs:
                    out.write("".join(f"{prefix}{value} {at}\n" for at in range(first, last + 1, step)))
        out.write("# EOF\n")
