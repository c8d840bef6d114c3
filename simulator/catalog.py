"""What the simulated cluster is made of: its users, the failure causes and the signals each leaves."""

from __future__ import annotations

import numpy as np

# Infrastructure failure causes: category, share, Xid (or None), drain reason, NHC check line.
CAUSES = (
    (
        "gpu_memory",
        0.22,
        48,
        "NHC: check_nv_ecc: uncorrectable ECC errors on GPU {gpu}",
        "check_nv_ecc:  GPU {gpu} has 1 uncorrectable volatile ECC errors",
    ),
    ("gpu_unavailable", 0.15, 79, "xid 79 gpu fell off bus", "check_gpu_count:  Expected 8 GPUs, found 7"),
    (
        "infiniband_link",
        0.18,
        None,
        "NHC: check_hw_ib: mlx5_{gpu} port 1 link down",
        "check_hw_ib:  Port 1 of device mlx5_{gpu} is Down",
    ),
    (
        "filesystem_mount",
        0.15,
        None,
        "NHC: check_fs_mount: /checkpoint not mounted",
        "check_fs_mount:  /checkpoint not mounted",
    ),
    (
        "gpu_nvlink",
        0.10,
        74,
        "NHC: check_nvlink: NVLink errors on GPU {gpu}",
        "check_nvlink:  GPU {gpu} link 3 is inactive",
    ),
    ("gpu_driver_firmware", 0.08, 119, "NHC: GSP RPC timeout on GPU {gpu}", None),
    (
        "pcie",
        0.07,
        None,
        "NHC: check_pcie: PCIe link width degraded on GPU {gpu}",
        "check_pcie:  GPU {gpu} PCIe link width x8, expected x16",
    ),
    ("node_unresponsive", 0.05, None, "Not responding", None),
)
CAUSE_SHARES = np.array([c[1] for c in CAUSES]) / sum(c[1] for c in CAUSES)
XID_TEXT = {
    13: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Illegal Instruction Parameter",
    31: "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    43: "Ch 00000010, engmask 00000101, intr 10000000",
    45: "Ch 00000010 caused by previous Xid {prev}",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.",
    63: "Row Remapper: New row (0x0000000000012345) was marked for remapping, reset gpu to activate.",
    74: "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
    79: "GPU has fallen off the bus.",
    92: "High single-bit ECC error rate detected on GPU.",
    119: "Timeout after 45s of waiting for RPC response from GPU{gpu} GSP! Expected function 76 (GSP_RM_CONTROL) sequence 4128 (0x20803039 0xb0).",
}
# What `dcgmi health -c` reports for a cause: (health system, message); messages as DCGM words them.
DCGM_INCIDENTS = {
    "gpu_memory": ("Memory system", "Detected 1 volatile double-bit ECC error(s) in GPU {gpu}."),
    "gpu_nvlink": (
        "NVLINK system",
        "Detected 12 NvLink replay errors on GPU {gpu}'s NVLink which exceeds threshold of 10",
    ),
    "pcie": (
        "PCIe system",
        "Detected more than 8 PCIe replays per minute for GPU {gpu} : 23 Reconnect PCIe card. "
        "Run system side PCIE diagnostic utilities to verify hops off the GPU board.",
    ),
    "gpu_unavailable": ("PCIe system", "GPU {gpu} is not responding: it fell off the bus"),
    "gpu_driver_firmware": ("Driver", "GPU {gpu}: driver error detected: GSP RPC timeout"),
}
PCI_IDS = (
    "0000:18:00",
    "0000:2a:00",
    "0000:3a:00",
    "0000:5d:00",
    "0000:9a:00",
    "0000:ab:00",
    "0000:ba:00",
    "0000:db:00",
)
USERS = (
    ("alice", "vision", 1001),
    ("bob", "llm", 1002),
    ("carol", "llm", 1003),
    ("dave", "speech", 1004),
    ("erin", "rl", 1005),
    ("frank", "vision", 1006),
    ("grace", "llm", 1007),
    ("heidi", "robotics", 1008),
)
CAUSE_NAMES = tuple(c[0] for c in CAUSES)
