"""The saved dcgm-exporter series (`dcgm_series`, what `prometheus_dcgm` pulls) read as health events:
the Xid gauge's changes, the windowed Xid count's rises, the error counters' increases across a
reset, each at the first evaluation time showing it with the step as its uncertainty."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from flows.ingest.parse import parse_source
from flows.ingest.sources.dcgm_series import (
    DcgmSeriesReadStats,
    check_header,
    header_line,
    read_dcgm_series,
    runs_of,
    series_line,
)
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck, XidEvent

T0 = 1_790_000_000 - 1_790_000_000 % 60  # a whole minute
STEP = 60
GPU = {"gpu": "3", "UUID": "GPU-abc", "modelName": "NVIDIA H100 80GB HBM3", "job": "dcgm", "instance": "gpu7:9400"}


def series(name: str, node: str, values: list[str | None], **labels: str) -> str:
    """A series line of `values` at T0, T0 + STEP, ... (None: no sample then)."""
    points = [(T0 + i * STEP, v) for i, v in enumerate(values) if v is not None]
    return series_line({"__name__": name, "Hostname": node, **GPU, **labels}, runs_of(points, STEP))


def saved(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "dcgm_series.jsonl"
    header = header_line("http://127.0.0.1:9090", "{...}", T0, T0 + 20 * STEP, STEP, "Hostname")
    path.write_text(header + "".join(lines))
    return path


def at(step: int) -> datetime:
    return datetime.fromtimestamp(T0 + step * STEP, UTC)


def test_runs_are_query_range_values_without_repetition():
    values = [(T0, "0"), (T0 + 60, "0"), (T0 + 120, "79"), (T0 + 300, "79"), (T0 + 360, "79")]
    assert runs_of(values, STEP) == [(T0, T0 + 60, "0"), (T0 + 120, T0 + 120, "79"), (T0 + 300, T0 + 360, "79")]


def test_the_gauge_changing_to_a_non_zero_value_is_an_xid_at_the_first_sample_showing_it(tmp_path):
    # 79 before the pull (baseline), 0 after a driver reload, 48, 48 again after a gap (no new event), 79
    path = saved(tmp_path, series("DCGM_FI_DEV_XID_ERRORS", "gpu7", ["79", "0", "0", "48", None, "48", "79", "79"]))
    stats = DcgmSeriesReadStats()
    events = list(read_dcgm_series(path, stats=stats, quarantine=Quarantine()))
    assert [(e.xid, e.ts, e.node, e.uncertainty_seconds) for e in events] == [
        (48, at(3), "gpu7", 60),
        (79, at(6), "gpu7", 60),
    ]
    assert all(isinstance(e, XidEvent) for e in events) and stats.gpus_counted == 0
    assert events[0].message == "DCGM_FI_DEV_XID_ERRORS GPU 3 (GPU-abc)"


def test_a_gpus_series_are_one_whatever_labels_change_with_its_xid_or_its_mig_instances(tmp_path):
    # dcgm-exporter >= 3.3.6: err_code / err_msg follow the value, so each Xid starts a series;
    # a MIG GPU has its gauge once per instance
    path = saved(
        tmp_path,
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", ["0", "0", None, None], err_code="0", GPU_I_ID="1"),
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", ["0", "0", None, None], err_code="0", GPU_I_ID="2"),
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", [None, None, "79", "79"], err_code="79", GPU_I_ID="1"),
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", [None, None, "79", "79"], err_code="79", GPU_I_ID="2"),
    )
    events = list(read_dcgm_series(path, stats=DcgmSeriesReadStats(), quarantine=Quarantine()))
    assert [(e.xid, e.ts) for e in events] == [(79, at(2))]


def test_the_windowed_count_rises_by_its_xid_label_and_then_its_gpus_gauge_is_not_read(tmp_path):
    path = saved(
        tmp_path,
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", ["0", "0", "79", "79", "79", "79"]),
        series("DCGM_FI_DEV_XID_ERRORS", "gpu9", ["0", "0", "0", "31", "31", "31"]),  # no count: its gauge
        # appears after the pull began: counts whole; falls as the window moves on; rises by 2
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu7", [None, None, "1", "1", "0", "2"], xid="79"),
        # present when the pull began: its first value is the state before
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu8", ["1", "1", "0", None, None, "1"], xid="48"),
    )
    stats = DcgmSeriesReadStats()
    events = list(read_dcgm_series(path, stats=stats, quarantine=Quarantine()))
    assert [(e.node, e.xid, e.ts) for e in events] == [
        ("gpu9", 31, at(3)), ("gpu7", 79, at(2)), ("gpu7", 79, at(5)), ("gpu7", 79, at(5)), ("gpu8", 48, at(5))
    ]  # fmt: skip
    assert stats.gpus_counted == 2


def test_an_error_counter_increase_is_a_check_and_a_reset_counts_from_zero(tmp_path):
    path = saved(
        tmp_path,
        series("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gpu7", ["5", "5", "7", "7", "0", "0", "3"]),
        series("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "gpu7", ["0", "0", "0", "1"]),
        series("DCGM_FI_DEV_GPU_TEMP", "gpu7", ["40", "90"]),  # not an error counter
    )
    stats = DcgmSeriesReadStats()
    checks = [e for e in read_dcgm_series(path, stats=stats, quarantine=Quarantine()) if isinstance(e, HealthCheck)]
    assert [(c.check, c.ts, c.message, c.status) for c in checks] == [
        ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", at(2), "GPU 3 (GPU-abc): +2", "increase"),
        ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", at(6), "GPU 3 (GPU-abc): +3", "increase"),
        ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", at(3), "GPU 3 (GPU-abc): +1", "increase"),
    ]
    assert stats.counter_events == 3 and stats.series == 3


def test_a_series_without_its_host_or_with_no_xid_is_quarantined_and_the_others_read(tmp_path):
    no_host = series_line({"__name__": "DCGM_FI_DEV_XID_ERRORS", **GPU}, [(T0, T0, "0")])
    path = saved(
        tmp_path,
        no_host,
        "not json\n",
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu7", [None, "1"], xid="0"),
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu7", [None, "1"], xid="13"),
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu7", [None, "1"], xid="abc"),
    )
    quarantine = Quarantine(strict=False)
    events = list(read_dcgm_series(path, stats=DcgmSeriesReadStats(), quarantine=quarantine))
    assert [(e.xid, e.source_line) for e in events] == [(13, 5)]
    assert [(e.line, e.field) for e in quarantine.errors] == [(2, "Hostname"), (3, "series"), (4, "xid"), (6, "xid")]


def test_a_file_that_is_no_saved_series_is_quarantined_whole(tmp_path):
    path = tmp_path / "dcgm_series.jsonl"
    path.write_text('{"metric": {}}\n')
    quarantine = Quarantine(strict=False)
    assert list(read_dcgm_series(path, stats=DcgmSeriesReadStats(), quarantine=quarantine)) == []
    assert [(e.line, e.field) for e in quarantine.errors] == [(1, "header")]
    with pytest.raises(InputFormatError, match="not a saved dcgm-exporter series file"):
        check_header(path, "UTC")  # check --month


def test_parse_shows_the_xids_and_the_checks_of_one_file_side_by_side(tmp_path):
    path = saved(
        tmp_path,
        series("DCGM_FI_DEV_XID_ERRORS", "gpu7", ["0", "79"]),
        series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpu7", ["0", "2"]),
    )
    parsed = parse_source("dcgm_series", path)
    rows = parsed.rows.to_pylist()
    assert [(r["node"], r["xid"], r["check_name"], r["ts_uncertainty_seconds"]) for r in rows] == [
        ("gpu7", None, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", STEP),
        ("gpu7", 79, None, STEP),
    ]
    assert parsed.stats["xid_events"] == 1 and parsed.stats["counter_events"] == 1


@pytest.mark.parametrize("value", ["+Inf", "NaN", "-3", "2.5", "1e12"])
def test_a_count_that_is_no_count_quarantines_its_series_and_never_hangs(tmp_path, value):
    """A windowed Xid count or an error counter at +Inf, NaN, below 0, or rising by a fraction or by more
    than any GPU logs (1e12 would be a trillion events) is quarantined, the other series read."""
    path = saved(
        tmp_path,
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu7", ["0", value], xid="13"),
        series("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gpu7", ["0", value]),
        series("DCGM_EXP_XID_ERRORS_COUNT", "gpu8", ["0", "2"], xid="79"),
    )
    quarantine = Quarantine(strict=False)
    events = list(read_dcgm_series(path, stats=DcgmSeriesReadStats(), quarantine=quarantine))
    assert [(e.node, e.xid) for e in events if isinstance(e, XidEvent)] == [("gpu8", 79), ("gpu8", 79)]
    assert [e.line for e in quarantine.errors if e.field == "DCGM_EXP_XID_ERRORS_COUNT"] == [2]
    counter_bad = value in ("+Inf", "NaN", "-3")  # a counter may rise by a fraction or by a trillion
    assert [e.line for e in quarantine.errors if e.field == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"] == [3] * counter_bad
