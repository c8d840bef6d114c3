"""The hostile-input corpus's health-event hosts (issue 35): an event whose host field is a name but
not a node of the month (`gpu 0012:` read as host `gpu`, a fully qualified name where Slurm has the
short one) is kept and counted in data quality, per source, with examples, their file and line
(expectations/node_names.json); events on the month's nodes are not.

A real dump (tests/data/slurm-22.05: node1, node2) lands with an Xid log; the landed-data suites
then run on it as a run's quality stage does (no warehouse: the suites read the landed Parquet)."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
from hostile import Outcome, hostile

from flows import EXPECTATIONS_DIR
from flows.config.file import load_config
from flows.core.months import Month
from flows.ingest.land import land_month
from flows.quality.suites import validate_month
from flows.warehouse.engines import DuckDBMarts

MONTH = Month.parse("2026-11")
XID = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
LINES = [
    f"2026-11-22T03:22:00+00:00 node1 {XID}",  # a node of the month (its jobs ran there)
    f"2026-11-22T03:22:01+00:00 gpu 0012: {XID}",  # the host read as `gpu`, `0012:` as the tag
    f"2026-11-22T03:22:02+00:00 node2.cluster.local {XID}",  # Slurm calls it node2
    f"Nov 22 03:22:03 node2 {XID}",
]


@hostile(Outcome.FIGURE)
def test_health_events_on_hosts_that_are_no_node_of_the_month_are_counted_with_their_lines(slurm_fixtures, tmp_path):
    (tmp_path / "sacct.psv").write_bytes((slurm_fixtures / "sacct_fields_allocations.psv").read_bytes())
    (tmp_path / "xid.log").write_text("\n".join(LINES) + "\n")
    config = tmp_path / "c.toml"
    config.write_text(
        'cluster = "ci"\n\n[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n'
        '[[sources]]\nkind = "xid_syslog"\npath = "xid.log"\n\n[paths]\ndata = "data"\n'
    )
    landed = land_month(load_config(config), MONTH)
    # every event is kept (nothing dropped): the figures still count them, under the host read
    assert pq.read_table(landed / "xid_events.parquet")["node"].to_pylist() == [
        "node1",
        "gpu",
        "node2.cluster.local",
        "node2",
    ]

    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "node_names.json").write_bytes((EXPECTATIONS_DIR / "node_names.json").read_bytes())
    results = validate_month(
        tmp_path / "none.duckdb", MONTH, suites_dir=suites, landed_dir=landed, marts=DuckDBMarts(duckdb.connect())
    )
    (hosts,) = [r for r in results if r.suite == "node_names"]
    assert hosts.rows == 1 and not hosts.failures  # a warning: the report goes out, saying so
    (warning,) = hosts.warnings
    assert (warning["column"], warning["unexpected_count"]) == ("source_nodes_unmatched", 1)
    (finding,) = warning["sample"]
    assert finding.startswith(
        "xid_syslog: 2 of the 4 nodes it names are in no job record or Slurm node event "
        "(e.g. gpu (xid.log:2), node2.cluster.local (xid.log:3))"
    )
