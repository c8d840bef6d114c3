"""Data-quality suites (Great Expectations 1.x, JSON files in expectations/) run on the month's data.

A suite's `meta` says what it checks: `table` (a warehouse table or view, with `filter_by_month`
to take the month's rows) or `query`, SQL with `{month}`, `{month_start}`, `{month_end}` and
`{landed_dir}` filled in (so the landed Parquet and shares of rows can be checked too). Each
expectation is `critical` (the default: a failure stops the run) or, with `"meta": {"severity":
"warning"}`, a warning that is reported but lets the run go on.

GX's SQL datasource does not work on DuckDB (an IndexError in resolve_metric_bundle, GX issues
#10738 and #11579), so each table is read
into a pandas frame and validated there. GX silently drops unknown expectation types, so the
number of loaded expectations is checked against the file.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from flows import EXPECTATIONS_DIR
from flows.months import Month


class DataQualityError(RuntimeError):
    pass


@dataclass
class SuiteResult:
    suite: str
    table: str
    rows: int
    evaluated: int
    successful: int
    failures: list[dict] = field(default_factory=list)  # critical: the run stops
    warnings: list[dict] = field(default_factory=list)  # reported only

    @property
    def success(self) -> bool:
        return not self.failures


def load_suite(path: Path):
    import great_expectations as gx

    spec = json.loads(path.read_text())
    spec.pop("id", None)
    suite = gx.ExpectationSuite(**spec)
    if len(suite.expectations) != len(spec["expectations"]):
        raise DataQualityError(
            f"{path}: {len(spec['expectations']) - len(suite.expectations)} expectation(s) could not be loaded "
            "(unknown expectation type?)"
        )
    return suite


def _columns(suite) -> list[str]:
    """The columns a suite's expectations look at: only these are read (a month's attempts are
    millions of rows; pandas frames of every column cost more than the checks)."""
    names = []
    for expectation in suite.expectations:
        kwargs = expectation.configuration.kwargs
        for key in ("column", "column_A", "column_B"):
            if kwargs.get(key):
                names.append(kwargs[key])
        names.extend(kwargs.get("column_list") or [])
    return list(dict.fromkeys(names))


def _rows_query(meta: dict, month: Month, landed_dir: Path | None) -> tuple[str, list]:
    if "query" in meta:
        return meta["query"].format(
            month=month,
            month_start=month.start.strftime("%Y-%m-%d %H:%M:%S"),
            month_end=month.end.strftime("%Y-%m-%d %H:%M:%S"),
            landed_dir=landed_dir,
        ), []
    query = f'select * from "{meta["table"]}"'
    return (query + " where month = ?", [str(month)]) if meta.get("filter_by_month") else (query, [])


def validate_month(
    warehouse_path: Path,
    month: Month,
    suites_dir: Path = EXPECTATIONS_DIR,
    landed_dir: Path | None = None,
    results_dir: Path | None = None,
) -> list[SuiteResult]:
    """Run every suite on its rows for `month`; raise DataQualityError naming the critical failures.

    With `results_dir`, every run's results are kept there as `<UTC time>.json` (a failed run too).
    """
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.execution_engine import pandas_execution_engine

    # GX fingerprints every batch by hashing the whole frame, twice per suite, for a marker nothing
    # here reads (most of the suites' time on a large month: bench/README.md). Frames above
    # HASH_THRESHOLD bytes are not hashed; 0 turns it off (tests/test_quality_speed.py notices if GX
    # drops the knob).
    pandas_execution_engine.HASH_THRESHOLD = 0
    # GX sets INFO on some of its own loggers (e.g. "created temporary directory for docs site").
    for name in ("great_expectations", "great_expectations.data_context.types.base"):
        logging.getLogger(name).setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    datasource = context.data_sources.add_or_update_pandas("warehouse")
    results = []
    with duckdb.connect(str(warehouse_path), read_only=True) as con:
        for path in sorted(suites_dir.glob("*.json")):
            suite = load_suite(path)
            table = suite.meta.get("table", "query")
            query, params = _rows_query({"table": suite.name, **suite.meta}, month, landed_dir)
            columns = ", ".join(f'"{c}"' for c in _columns(suite)) or "1 as row_present"
            frame = con.execute(f"select {columns} from ({query})", params).df()
            batch_def = datasource.add_dataframe_asset(name=suite.name).add_batch_definition_whole_dataframe("month")
            outcome = batch_def.get_batch(batch_parameters={"dataframe": frame}).validate(
                suite, result_format="SUMMARY"
            )
            failed = [
                (
                    (r.expectation_config.meta or {}).get("severity", "critical"),
                    {
                        "expectation": r.expectation_config.type,
                        "column": r.expectation_config.kwargs.get("column"),
                        "observed": _jsonable(r.result.get("observed_value")),
                        "unexpected_count": r.result.get("unexpected_count"),
                        "sample": _jsonable(r.result.get("partial_unexpected_list")),
                        "error": (r.exception_info or {}).get("exception_message") if r.exception_info else None,
                    },
                )
                for r in outcome.results
                if not r.success
            ]
            stats = outcome.statistics
            results.append(
                SuiteResult(
                    suite=suite.name,
                    table=table,
                    rows=len(frame),
                    evaluated=int(stats["evaluated_expectations"]),
                    successful=int(stats["successful_expectations"]),
                    failures=[f for severity, f in failed if severity != "warning"],
                    warnings=[f for severity, f in failed if severity == "warning"],
                )
            )
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        (results_dir / f"{stamp}.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
    failed = [r for r in results if not r.success]
    if failed:
        lines = [
            f"{r.suite}: {f['expectation']}"
            + (f" on {f['column']}" if f["column"] else "")
            + (f" ({f['unexpected_count']} unexpected, e.g. {f['sample']})" if f["unexpected_count"] else "")
            + (f" observed={f['observed']}" if f["observed"] is not None else "")
            for r in failed
            for f in r.failures
        ]
        raise DataQualityError("data-quality checks failed:\n  " + "\n  ".join(lines))
    return results


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)
