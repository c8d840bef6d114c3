"""Data-quality suites (Great Expectations 1.x, JSON files in expectations/) run on the month's marts.

GX's SQL datasource does not work on DuckDB (../shared/docs/stack.md §5), so each table is read
into a pandas frame and validated there. GX silently drops unknown expectation types, so the
number of loaded expectations is checked against the file.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
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
    failures: list[dict] = field(default_factory=list)

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


def validate_month(warehouse_path: Path, month: Month, suites_dir: Path = EXPECTATIONS_DIR) -> list[SuiteResult]:
    """Run every suite on its table's rows for `month`; raise DataQualityError naming the failures."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

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
            table = suite.meta.get("table", suite.name)
            query = f'select * from "{table}"'
            params = []
            if suite.meta.get("filter_by_month"):
                query += " where month = ?"
                params = [str(month)]
            frame = con.execute(query, params).df()
            batch_def = datasource.add_dataframe_asset(name=suite.name).add_batch_definition_whole_dataframe("month")
            outcome = batch_def.get_batch(batch_parameters={"dataframe": frame}).validate(
                suite, result_format="SUMMARY"
            )
            failures = [
                {
                    "expectation": r.expectation_config.type,
                    "column": r.expectation_config.kwargs.get("column"),
                    "observed": _jsonable(r.result.get("observed_value")),
                    "unexpected_count": r.result.get("unexpected_count"),
                    "sample": _jsonable(r.result.get("partial_unexpected_list")),
                    "error": (r.exception_info or {}).get("exception_message") if r.exception_info else None,
                }
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
                    failures=failures,
                )
            )
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
