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
