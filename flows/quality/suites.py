"""Data-quality suites (Great Expectations 1.x, JSON files in expectations/) run on the month's data.

A suite's `meta` says what it checks: `table` (a warehouse table or view, with `filter_by_month`
to take the month's rows) or `query`, SQL with `{month}`, `{month_start}`, `{month_end}` and
`{landed_dir}` filled in (so the landed Parquet and shares of rows can be checked too), and
`{landed_signals}`: every landed node signal (the landed tables of the declared sources, each row
with its `source`), whose suite also gets the expectation that each `source` is one a source kind
declares (flows/ingest/sources/registry.py, `LANDED_SOURCES`). Each
expectation is `critical` (the default: a failure stops the run) or, with `"meta": {"severity":
"warning"}`, a warning that is reported but lets the run go on.

The landed tables' schema is not restated here: it comes from the registry of formats
(`flows.ingest.sources.tables.TABLES`, one typed Field per column). With a landed directory, the suite
`landed_schema` checks that each landed table has the registry's columns with their types, and
each landed table's `required` fields are checked not null: in the suite that names the table as
its `landed_table` (which then reads its Parquet), or else in a suite `landed_<table>` of its own.
The suites in expectations/ hold the rules about the data: ranges, relationships, thresholds.

Each check is made once. dbt's data tests (dbt_project/models/*.yml) own the models' keys: unique
and not null, on the mart that carries the key (checked in SQL where the rows are, before any later
model reads them; a failure stops the build). The suites here own the landed files' contract (the
registry's columns, types and required fields) and the rules about the month's data, with their
severities, kept with each run and shown in the report; they do not test again a key that dbt
tests.

The GX context, its one dataframe asset and the suites are made once per process and re-used by
every month it validates (a backfill validates many). A suite whose rows are the ones it validated
in the month's previous run (the same suite, the same frame, byte for byte, in the same order) has
that run's result again without GX (`RESULTS_BY_INPUT` in the results directory): a month refreshed
because an earlier month was built has mostly unchanged rows.

GX's SQL datasource does not work on DuckDB (an IndexError in resolve_metric_bundle, GX issues
#10738 and #11579), so each table is read
into a pandas frame and validated there. GX silently drops unknown expectation types, so the
number of loaded expectations is checked against the file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import sys
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import duckdb
import pandas as pd

from flows import EXPECTATIONS_DIR
from flows.core.months import Month
from flows.ingest.sources.registry import LANDED_SOURCES
from flows.ingest.sources.tables import SQL_TYPES, TABLES, column_names
from flows.warehouse.engines import DuckDBMarts, MartReader

# A month's suite results keyed by their inputs (input_key), beside its kept results (not *.json:
# those are the runs' results)
RESULTS_BY_INPUT = "results-by-input.cache"


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


def import_gx() -> ModuleType:
    """great_expectations, imported without pyspark unless the process imported pyspark already
    (the Spark engine's session). GX imports pyspark whenever it is installed
    (great_expectations/compatibility/pyspark.py), which costs a quarter of GX's import and prints
    pyspark's pandas-3 FutureWarnings, for Spark dataframes GX is never given here: the suites
    validate pandas frames on either engine. pyspark stays importable afterwards."""
    if "great_expectations" in sys.modules or "pyspark" in sys.modules:
        import great_expectations as gx

        return gx
    # None in sys.modules: `import pyspark` raises ImportError, which GX takes for "not installed"
    sys.modules["pyspark"] = None  # type: ignore[assignment]
    try:
        import great_expectations as gx
    finally:
        del sys.modules["pyspark"]
    return gx


def load_suite(spec: dict, source: str):
    """The GX suite of a suite's JSON `spec` (`source` says where it came from, for the error);
    made once per process for each distinct spec."""
    return _load_suite(json.dumps(spec, sort_keys=True), source)


@functools.cache
def _load_suite(spec_json: str, source: str):
    gx = import_gx()

    spec = {key: value for key, value in json.loads(spec_json).items() if key != "id"}
    suite = gx.ExpectationSuite(**spec)
    if len(suite.expectations) != len(spec["expectations"]):
        raise DataQualityError(
            f"{source}: {len(spec['expectations']) - len(suite.expectations)} expectation(s) could not be loaded "
            "(unknown expectation type?)"
        )
    return suite


def _parquet(table: str) -> str:
    return f"read_parquet('{{landed_dir}}/{table}.parquet')"


def landed_schema_suite() -> dict:
    """The suite that checks each landed table's columns and their types against the registry."""
    fields = [f"{table}.{f.name} {SQL_TYPES[f.type]}" for table, columns in TABLES.items() for f in columns]
    always = [
        f"{table}.{f.name} {SQL_TYPES[f.type]}" for table, columns in TABLES.items() for f in columns if not f.optional
    ]
    query = " union all ".join(
        f"select '{table}.' || column_name || ' ' || column_type as field from (describe select * from {_parquet(table)})"
        for table in TABLES
    )
    return {
        "name": "landed_schema",
        "meta": {"query": query, "notes": "The landed Parquet has the registry's columns, each of its type."},
        "expectations": [
            {
                "type": "expect_column_values_to_be_in_set",
                "kwargs": {"column": "field", "value_set": fields},
                "meta": {"why": "a column the registry does not have, or of another type"},
            },
            {
                "type": "expect_column_distinct_values_to_contain_set",
                "kwargs": {"column": "field", "value_set": always},
                "meta": {"why": "a column of the registry is missing (an optional one is landed when a row gives it)"},
            },
        ],
    }


def landed_signals_relation() -> str:
    """`{landed_signals}`: the landed tables of the declared sources as one relation, by column name
    (a column another table lacks is null), each row with its `source`: its own, or the one source
    declared for a table that has no such column."""
    selects = []
    for table in dict.fromkeys(landed.table for landed in LANDED_SOURCES.values()):
        if "source" in column_names(TABLES[table]):
            selects.append(f"select * from {_parquet(table)}")
        else:
            (source,) = (source for source, landed in LANDED_SOURCES.items() if landed.table == table)
            selects.append(f"select '{source}' as source, * from {_parquet(table)}")
    return "(" + " union all by name ".join(selects) + ")"


def with_landed_signals(spec: dict) -> dict:
    """A suite whose query reads `{landed_signals}`, with that relation and the expectation that each
    landed `source` is a declared one; any other suite as it is."""
    query = spec.get("meta", {}).get("query", "")
    if "{landed_signals}" not in query:
        return spec
    in_set = {
        "type": "expect_column_values_to_be_in_set",
        "kwargs": {"column": "source", "value_set": list(LANDED_SOURCES)},
    }
    meta = {**spec["meta"], "query": query.replace("{landed_signals}", landed_signals_relation())}
    return {**spec, "meta": meta, "expectations": [*spec["expectations"], in_set]}


def required_fields_expectations(table: str) -> list[dict]:
    return [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": f.name}}
        for f in TABLES[table]
        if f.required
    ]


def suite_specs(suites_dir: Path, landed: bool) -> list[tuple[str, dict]]:
    """The suites to run, each with where it came from: the files in `suites_dir` and, when the
    landed Parquet is checked too (`landed`), what the registry says about the landed tables."""
    specs = [
        (str(path), with_landed_signals(json.loads(path.read_text()))) for path in sorted(suites_dir.glob("*.json"))
    ]
    if not landed:
        return specs
    for _, spec in specs:
        if table := spec.get("meta", {}).get("landed_table"):
            spec["meta"].setdefault("query", f"select * from {_parquet(table)}")
            spec["expectations"] = required_fields_expectations(table) + spec["expectations"]
    named = {spec.get("meta", {}).get("landed_table") for _, spec in specs}
    for table in TABLES:
        if table not in named and (required := required_fields_expectations(table)):
            suite = {"name": f"landed_{table}", "meta": {"query": f"select * from {_parquet(table)}"}}
            specs.append(("the registry", {**suite, "expectations": required}))
    return [*specs, ("the registry", landed_schema_suite())]


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


def _rows_query(meta: dict, month: Month, landed_dir: Path | None, quote=lambda name: f'"{name}"') -> tuple[str, list]:
    if "query" in meta:
        return meta["query"].format(
            month=month,
            month_start=month.start.strftime("%Y-%m-%d %H:%M:%S"),
            month_end=month.end.strftime("%Y-%m-%d %H:%M:%S"),
            landed_dir=landed_dir,
        ), []
    query = f"select * from {quote(meta['table'])}"
    return (query + " where month = ?", [str(month)]) if meta.get("filter_by_month") else (query, [])


def validate_month(
    warehouse_path: Path,
    month: Month,
    suites_dir: Path = EXPECTATIONS_DIR,
    landed_dir: Path | None = None,
    results_dir: Path | None = None,
    marts: MartReader | None = None,
    no_jobs_declared: bool = False,
) -> list[SuiteResult]:
    """Run every suite on its rows for `month`; raise DataQualityError naming the critical failures.
    With `no_jobs_declared` (the operator said no job ran: --no-jobs-ran), the month's tables are
    expected empty: their "at least one row" expectations are not run.

    The marts are read through `marts` (any engine), by default from the DuckDB file
    `warehouse_path`; the landed Parquet is read by DuckDB. With `results_dir`, every run's results
    are kept there as `<UTC time>.json` (a failed run too).
    """
    batch_def = _batch_definition()
    results = []
    before = _results_by_input(results_dir)
    by_input: dict[str, dict] = {}
    with ExitStack() as stack:
        if marts is None:
            marts = DuckDBMarts(stack.enter_context(duckdb.connect(str(warehouse_path), read_only=True)))
        landed = marts if isinstance(marts, DuckDBMarts) else DuckDBMarts(stack.enter_context(duckdb.connect()))
        for source, spec in suite_specs(suites_dir, landed=landed_dir is not None):
            spec = _without_row_counts(spec) if no_jobs_declared else spec
            suite = load_suite(spec, source)
            reader = landed if "{landed_dir}" in suite.meta.get("query", "") else marts
            query, params = _rows_query({"table": suite.name, **suite.meta}, month, landed_dir, reader.quote)
            columns = ", ".join(reader.quote(c) for c in _columns(suite)) or "1 as row_present"
            frame = reader.frame(f"select {columns} from ({query})", params)
            key = input_key(spec, frame)
            result = SuiteResult(**before[key]) if key in before else _validate(batch_def, suite, frame)
            if key is not None:
                by_input[key] = asdict(result)
            results.append(result)
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        (results_dir / f"{stamp}.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
        (results_dir / RESULTS_BY_INPUT).write_text(json.dumps(by_input))
    _raise_on_failures(results)
    return results


def _validate(batch_def, suite, frame: pd.DataFrame) -> SuiteResult:
    """The result of validating `frame` against `suite` with GX."""
    outcome = batch_def.get_batch(batch_parameters={"dataframe": frame}).validate(suite, result_format="SUMMARY")
    failed = _failed_expectations(outcome)
    stats = outcome.statistics
    return SuiteResult(
        suite=suite.name,
        table=suite.meta.get("table", "query"),
        rows=len(frame),
        evaluated=int(stats["evaluated_expectations"]),
        successful=int(stats["successful_expectations"]),
        failures=[f for severity, f in failed if severity != "warning"],
        warnings=[f for severity, f in failed if severity == "warning"],
    )


def input_key(spec: dict, frame: pd.DataFrame) -> str | None:
    """What a suite's result is a function of: the suite as run, GX's version and the frame it
    validates (columns, types, every value in its order); none for a frame pandas cannot hash."""
    gx = import_gx()

    try:
        rows = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    except TypeError:  # a column of unhashable values (lists)
        return None
    digest = hashlib.sha256(json.dumps([gx.__version__, spec], sort_keys=True, default=str).encode())
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(rows)
    return digest.hexdigest()


def _results_by_input(results_dir: Path | None) -> dict[str, dict]:
    """The month's previous run's results by input_key (none kept, or unreadable: none)."""
    try:
        return json.loads((results_dir / RESULTS_BY_INPUT).read_text()) if results_dir else {}
    except (OSError, ValueError):
        return {}


def _without_row_counts(spec: dict) -> dict:
    """`spec` less its expectations that the table has rows (a month where no job ran has none)."""
    kept = [
        e
        for e in spec["expectations"]
        if not (e["type"] == "expect_table_row_count_to_be_between" and (e["kwargs"].get("min_value") or 0) >= 1)
    ]
    return {**spec, "expectations": kept}


@functools.cache
def _batch_definition():
    """The batch definition every suite's frame is validated through: an ephemeral GX context with
    one dataframe asset, made once per process (building it and adding the asset save the
    context's whole config)."""
    gx = import_gx()
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
    # one asset for every suite's frame: adding an asset saves the context's whole config (as YAML)
    asset = context.data_sources.add_or_update_pandas("warehouse").add_dataframe_asset(name="rows")
    return asset.add_batch_definition_whole_dataframe("month")


def _failed_expectations(outcome) -> list[tuple[str, dict]]:
    """(severity, what failed) of each failed expectation of a suite's validation result."""
    return [
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


def _raise_on_failures(results: list[SuiteResult]) -> None:
    """DataQualityError naming each critical failure, one line each."""
    lines = [
        f"{r.suite}: {f['expectation']}"
        + (f" on {f['column']}" if f["column"] else "")
        + (f" ({f['unexpected_count']} unexpected, e.g. {f['sample']})" if f["unexpected_count"] else "")
        + (f" observed={f['observed']}" if f["observed"] is not None else "")
        for r in results
        for f in r.failures
    ]
    if lines:
        raise DataQualityError("data-quality checks failed:\n  " + "\n  ".join(lines))


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)
