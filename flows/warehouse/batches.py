"""How the months of one warehouse build are grouped into dbt builds that fit `[warehouse] memory_limit`.

The heaviest models (the job runs: fct_job_runs and the model before it; fct_attempts) sort and
group every attempt of a build's months at once. DuckDB spills most operators beyond its limit, but
not all of them. A single build of six months of a 7,500-node cluster (9.2M attempts) at the default
3 GiB ran out of memory in one run of five. So the months are built oldest first, in consecutive
batches of at most ATTEMPTS_PER_GIB attempts per GiB of the limit; a larger month is built alone.

Each batch's incremental marts read the batches built before it, as a month's build reads the
months built before it, so the figures are those of month-by-month builds. The periods' marts
(tag `periods`) are rebuilt whole from the months' marts by a build, so only the last batch
builds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow.parquet as pq

from flows.core.months import Month

# Attempts a build may hold per GiB of memory_limit: two months of the bench's 7,500-node cluster
# (1.56M attempts each) at the default 3 GiB. Measured (bench/README.md "Memory"): at 3 GiB a build of
# 9.2M attempts ran out of memory once in five runs; one of 4.6M peaked at 3.9 GiB RSS and built.
ATTEMPTS_PER_GIB = 1_100_000
# Where a month's attempts are counted: the landed Parquet file's footer (no row is read).
ATTEMPTS_FILE = "attempts.parquet"


def landed_attempts(landed_dir: Path) -> int:
    """The attempts a landed month holds (0 when its attempts file cannot be read: the build names it)."""
    try:
        return pq.read_metadata(landed_dir / ATTEMPTS_FILE).num_rows
    except (OSError, ValueError):
        return 0


def build_batches(months: Mapping[Month, Path], memory_limit: int) -> list[dict[Month, Path]]:
    """`months` (each -> its landed directory) in consecutive batches, oldest first, each of at most
    ATTEMPTS_PER_GIB attempts per GiB of `memory_limit` (bytes), or one month."""
    budget = ATTEMPTS_PER_GIB * memory_limit / 2**30
    batches: list[dict[Month, Path]] = []
    held = 0
    for month, landed_dir in sorted(months.items()):
        attempts = landed_attempts(landed_dir)
        if not batches or held + attempts > budget:
            batches.append({})
            held = 0
        batches[-1][month] = landed_dir
        held += attempts
    return batches


def describe_batches(batches: list[dict[Month, Path]]) -> str:
    """The plan in words: "one build of 2026-05, 2026-06" or "3 builds: 2026-01..2026-02, 2026-03, ..."."""
    spans = [str(min(b)) if len(b) == 1 else f"{min(b)}..{max(b)}" for b in batches]
    if len(batches) == 1:
        return "one build of " + ", ".join(str(m) for m in batches[0])
    return f"{len(batches)} builds, each within [warehouse] memory_limit: " + ", ".join(spans)
