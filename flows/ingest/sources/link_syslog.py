"""Network links that went down, from syslog: the kernel's and systemd-networkd's lines.

A link flap is a down and then an up; each down is one health check (source `link`, check = the
interface, or the PCI device for a cable event, status = the event as logged). Lines read, behind
any syslog prefix `flows.ingest.sources.syslog` reads:
- systemd-networkd: `eth0: Lost carrier`
- Ethernet drivers: `ixgbe 0000:08:00.0 eth11: NIC Link is Down`, `igb: eth0 NIC Link is Down`
  (Intel), `mlx5_core 0000:08:00.7 ens9f0v5: Link down` (mlx5e), `r8169 0000:06:00.0 eth0: link
  down`, and phylib's `Link is Down`
- mlx5 port module events (the ConnectX cable): `mlx5_core 0000:0b:00.1: Port module event: module
  1, Cable unplugged` and `Port module event[error]: module 0, Cable error, High Temperature`
The taxonomy tells InfiniBand (`ib*` interfaces, ConnectX cables) from Ethernet links. Virtual
interfaces (veth, docker, bridges, tunnels, loopback) come and go with containers and VMs: they are
counted (`virtual_links`) and skipped. Link-up lines and every other line are counted and skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest.sources.clock import TimeZone
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

_DEVICE = r"(\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d|[\w.@-]+)"  # a PCI address or an interface name
_EVENT = (
    r"(Lost carrier|(?i:(?:NIC )?link (?:is )?down)"
    r"|Port module event: module \d+, Cable unplugged|Port module event\[error\]: module \d+, [^,]+(?:, [^,]+)?)"
)
LINK_DOWN_FIELDS = _DEVICE + r":? " + _EVENT  # Python and RE2 read it alike
MARKERS = ("Lost carrier", "ink is Down", "ink is down", "ink down", "ink Down", "Port module event")
VIRTUAL = re.compile(r"^(veth|docker|br-|virbr|vnet|tun|tap|lo$|cali|flannel|cni|vxlan|wg)")


@dataclass
class LinkReadStats(SyslogReadStats):
    """SyslogReadStats' counts; skip counts: `other_lines` (link-up lines and every line that is no
    link down, marker words included: they are too common to call a lost signal) and `virtual_links`."""

    virtual_links: int = 0  # skip count: downs of virtual interfaces


def read_link_syslog(
    path: Path,
    tz: TimeZone,
    year: int,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: LinkReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> pa.Table:
    """One row per link down, as the health-check table has them (less its cluster and source): node,
    ts (naive UTC), check_name (the interface), status (the event), message, source_file, source_line."""
    stats = stats if stats is not None else LinkReadStats()
    groups = ["device", "event"]
    found = read_syslog_messages(path, MARKERS, LINK_DOWN_FIELDS, groups, tz, year, stats, quarantine, limits=limits)
    physical = pa.array([not VIRTUAL.match(device) for device in found["device"].to_pylist()], pa.bool_())
    stats.virtual_links += found.num_rows - pc.sum(physical).as_py() if found.num_rows else 0
    found = found.filter(physical)
    checks = {
        "check_name": found["device"],
        "status": found["event"],
        "message": pc.utf8_trim_whitespace(found["rest"]),
    }
    return landed_rows(found, path, checks)
