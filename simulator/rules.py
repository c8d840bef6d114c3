"""The pipeline's rules as the simulator states them for its truth.

They are written here a second time on purpose: the simulator is the oracle the pipeline is tested
against, so it shares no definition with the code under test (it imports nothing from the pipeline
and reads none of its files). tests/test_simulator_oracle.py states that each one agrees with the
pipeline's: the defaults of its AnalysisConfig and the rows of its dbt seeds.
"""

from __future__ import annotations

# The attribution window (docs/methodology.md): an attempt that ended FAILED, REQUEUED or NODE_FAIL
# is the infrastructure's if a critical health signal on one of its nodes falls in
# [End - before, End + after] minutes.
ATTRIBUTION_BEFORE_MINUTES = 10
ATTRIBUTION_AFTER_MINUTES = 5

# The paper's r_f counts only jobs of more than this many GPUs.
PAPER_MIN_GPUS = 128

# ETTR: the simulated training runs checkpoint at this interval and pay this overhead at each restart,
# the values the pipeline's estimator assumes, so that the truth's ETTR is the one it must measure.
CKPT_INTERVAL_MINUTES = 60.0
RESTART_OVERHEAD_MINUTES = 5.0

# Training runs this long in a month enter the ETTR figure.
ETTR_MIN_RUN_HOURS = 24.0

# The order of causes when several critical signals tie (in one second, or at the same distance
# from a job's end): the first listed wins. Every cause the simulator injects is here.
CAUSE_PRIORITY = (
    "gpu_unavailable",
    "gpu_memory",
    "gpu_nvlink",
    "pcie",
    "infiniband_link",
    "filesystem_mount",
    "gpu_driver_firmware",
    "node_unresponsive",
)
# The cause of a NODE_FAIL with no critical signal in its window.
UNATTRIBUTED_NODE_FAILURE = "unattributed_node_failure"

# Job size buckets by GPUs: (lowest, highest, label), in the pipeline's order.
SIZE_BUCKETS = (
    ((0, 0, "0"), (1, 1, "1"), (2, 2, "2"), (3, 4, "4"), (5, 8, "8"))
    + tuple((2 ** (k - 1) + 1, 2**k, str(2**k)) for k in range(4, 14))
    + ((8193, 2**31 - 1, ">8192"),)
)

# What a figure needs to be measured (docs/metrics.md "not_measured"; the pipeline's
# flows/figures/measured.py): the defaults of [analysis] min_gpu_node_days and lemon_min_infra_failures.
# At zero failures over 100 GPU node-days r_f's 95% upper bound is 36.9 per 1000 node-days.
MIN_GPU_NODE_DAYS = 100.0
LEMON_MIN_INFRA_FAILURES = 10


def failed_rules(
    node_source: bool,
    gpu_attempts: int,
    gpu_node_days: float,
    paper_node_days: float,
    gpu_infra_failures: int,
    gpu_ended_attempts: int,
) -> dict[str, str]:
    """rule -> reason code, for each rule of what a figure needs that a month's inputs fail (the
    pipeline's flows/figures/measured.py RULES; which figure needs which rule, its registry says):
    `node_source` is whether its dump has node events or health logs; the rest are its GPU
    attempts, their node-days (all, and of jobs above PAPER_MIN_GPUS), the infrastructure failures
    the pipeline counts of them and its GPU attempts that ended in the month (none: its count of
    failures is unknown, not 0)."""
    codes: dict[str, str] = {}
    if gpu_attempts == 0:
        codes["gpu_attempt_ended"] = "no_gpu_jobs"
    elif gpu_ended_attempts == 0:
        codes["gpu_attempt_ended"] = "no_gpu_attempt_ended"
    gpu = "no_gpu_jobs" if gpu_attempts == 0 else "thin_gpu_exposure" if gpu_node_days < MIN_GPU_NODE_DAYS else None
    if gpu:
        codes["gpu_exposure"] = gpu
    if paper_node_days < MIN_GPU_NODE_DAYS:
        codes["paper_exposure"] = "no_gpu_jobs" if gpu == "no_gpu_jobs" else "thin_gpu_exposure"
    if not node_source:
        codes["node_source"] = "no_node_source"
        # the simulator's node sources come together: its node events with its health logs
        codes["node_event_source"] = "no_node_event_source"
        if gpu_infra_failures < LEMON_MIN_INFRA_FAILURES:
            codes["node_source_or_failures"] = "no_node_source_few_failures"
    return codes
