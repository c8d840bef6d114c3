"""Benchmark: `explain --job` and `node NAME` on a warehouse of 12 months at 1.5M attempts a month (issue 54).

    .venv/bin/python bench/explain_bench.py [--sim DIR] [--warehouse PATH] [--months 12] [--repeat 3] [--remake]
        [--workdir DIR] [--results DIR] [--toy]

Issue 54 asks both commands to read the built warehouse only and to answer within 2 s on 12 months of
1.5M attempts each. This bench:
  1. builds one month (2026-10) of the 1.5M-attempt bench cluster with this checkout, in process through
     the monthly flow's tasks (bench/month_bench.py `pipeline_stages`, once: a warehouse of this schema
     version with the month built and its metrics.json in place is reused), from <workdir>/sim/bench/2026-10/ (simulated there once,
     or --sim DIR linked there); or takes --warehouse PATH (a built DuckDB file of this schema version
     with the month built, linked as <workdir>/given/'s; put the month's metrics.json under
     <workdir>/given/reports/bench/2026-10/ for its lemon marks);
  2. makes a --months-month warehouse of it (<workdir>/many/): a copy of the file in which every table
     with a month column (`month`, `landed_month`, or `period_id` 'month:YYYY-MM') gets the month's
     rows again under each of the previous months' labels, timestamps and dates shifted by as many
     months (attempt ids repeat across months: every join is month-scoped); meta.built_by is kept;
     the landed.* views read each month's Parquet files (links to the built month's), and each month's
     report directory has the built month's metrics.json (the lemon marks read it); made once, kept
     while newer than the one-month file (--remake: again);
  3. times each case as a user runs it, `python -m flows.cli explain --job ID --config C` or `node NAME`
     in a fresh process, --repeat times, on the one-month and on the many-month warehouse: an
     infrastructure failure of the largest job (>= 128 GPUs when there is one), an array task (123_4)
     and its bare array id, a job that is in neither warehouse (must exit 2), the node with the most
     faults (a lemon candidate of the month when there is one), and the first and the node with
     --json; and `python -c "import flows.cli"` alone (start-up and imports: the part no query saves).
Min and median wall seconds per case, the exit codes, the warehouses' sizes and row counts go to
stdout and <results>/explain.json (bench/results/ by default). --toy: a one-node month (~5,000
attempts; tests/test_benches.py runs `--toy --months 2 --repeat 1`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from month_bench import (  # bench/ is this script's directory, so on sys.path
    BIG,
    MONTH,
    SMALL,
    link_simulated,
    pipeline_stages,
    simulated,
)

from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.warehouse import schema_version
from flows.warehouse.engines import duckdb_landed_view

ROOT = Path(__file__).resolve().parent.parent

RESULTS = ROOT / "bench" / "results"
CLUSTER = "bench"
TARGET_SECONDS = 2.0  # issue 54
MONTH_COLUMNS = ("month", "landed_month")  # a row's month; period_id 'month:YYYY-MM' besides
LARGE_GPUS = 128
MISSING_JOB = "987654321"  # no simulated job has this id


def current_version(warehouse: Path) -> bool:
    """The file records this checkout's schema version and has MONTH built."""
    if not warehouse.is_file():
        return False
    try:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            built = con.execute(f"select schema_version from {schema_version.TABLE}").fetchone()
            months = {m for (m,) in con.execute("select month from fct_months_built").fetchall()}
    except duckdb.Error:
        return False
    return built is not None and built[0] == schema_version.schema_version() and str(MONTH) in months


def build_month(root: Path, attempts: int, sim: Path | None) -> dict:
    """MONTH of the bench cluster built under `root` (once: reused while this schema version's)."""
    root.mkdir(parents=True, exist_ok=True)
    config = load_config(write_demo_config(root, CLUSTER, root / "reports"))
    if sim is not None:  # the demo config reads sim/<cluster>/<month>/ under the work dir
        link_simulated(root / "sim" / CLUSTER / str(MONTH), sim, "--sim")
    metrics = config.report_dir(MONTH) / "metrics.json"
    if current_version(config.warehouse_path) and metrics.exists():
        print(f"reusing {config.warehouse_path} (schema version {schema_version.schema_version()})", flush=True)
        return {"built": False}
    simulated(attempts, root, CLUSTER)
    print(f"building {MONTH} of {CLUSTER} ...", flush=True)
    started = time.perf_counter()
    stages = pipeline_stages(root, CLUSTER, 1)  # the report goes to <root>/rendered/<cluster>/
    metrics.parent.mkdir(parents=True, exist_ok=True)  # where `run` puts it: the lemon marks read it there
    shutil.copyfile(root / "rendered" / CLUSTER / "metrics.json", metrics)
    return {"built": True, "build_seconds": round(time.perf_counter() - started, 1), "attempts": stages["attempts"]}


def month_tables(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Every base table with a month column: "schema.table" -> (that column, [(column, type)])."""
    tables: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    rows = con.execute(
        """select c.schema_name, c.table_name, c.column_name, c.data_type from duckdb_columns() as c
        inner join duckdb_tables() as t on t.database_name = c.database_name and t.schema_name = c.schema_name
            and t.table_name = c.table_name
        where c.database_name = current_database() order by c.schema_name, c.table_name, c.column_index"""
    ).fetchall()
    columns: dict[str, list[tuple[str, str]]] = {}
    for schema, table, column, kind in rows:
        columns.setdefault(f"{schema}.{table}", []).append((column, kind))
    for name, cols in columns.items():
        names = [c for c, _ in cols]
        key = next((c for c in (*MONTH_COLUMNS, "period_id") if c in names), None)
        if key is not None:
            tables[name] = (key, cols)
    return tables


def shifted(column: str, kind: str, back: int, label: str, new: str) -> str:
    """The SQL of `column` for a copy `back` months earlier: month labels replaced, times shifted."""
    quoted = f'"{column}"'
    if kind in ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "DATE"):
        return f"{quoted} - interval {back} month"
    if kind == "VARCHAR" and column == "period_id":
        return f"replace({quoted}, '{label}', '{new}')"
    if kind == "VARCHAR" and ("month" in column or column.endswith("_until")):
        return f"case when {quoted} = '{label}' then '{new}' else {quoted} end"
    return quoted


def many_months(one: Path, root: Path, months: int, metrics: Path | None, remake: bool = False) -> dict:
    """A copy of the one-month warehouse `one` with MONTH's rows again under the `months - 1` months
    before it (module docstring, step 2), its config under root; its size and row counts. Made once:
    kept while newer than `one` and of `months` months, unless `remake`."""
    root.mkdir(parents=True, exist_ok=True)
    config_path = write_demo_config(root, CLUSTER, root / "reports")
    config = load_config(config_path)
    warehouse = config.warehouse_path
    made = {"config": str(config_path)}
    if remake or not kept(warehouse, one, months):
        started = time.perf_counter()
        copy_months(one, config, [MONTH.minus(back) for back in range(months)], metrics)
        made["seconds_to_make"] = round(time.perf_counter() - started, 1)
    else:
        print(f"reusing {warehouse}", flush=True)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        made["rows"] = {
            table: con.execute(f"select count(*) from {table}").fetchone()[0]
            for table in ("fct_attempts", "fct_failures", "fct_health_events", "landed.attempts", "fct_months_built")
        }
        made["months_built"] = [
            m for (m,) in con.execute("select month from fct_months_built order by month").fetchall()
        ]
    made["size_mib"] = round(warehouse.stat().st_size / 2**20)
    return made


def kept(warehouse: Path, one: Path, months: int) -> bool:
    """A many-month warehouse made from `one` as it is now, of `months` months."""
    if not current_version(warehouse) or warehouse.stat().st_mtime < one.stat().st_mtime:
        return False
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute("select count(*) from fct_months_built").fetchone()[0] == months


def copy_months(one: Path, config, labels: list[Month], metrics: Path | None) -> None:
    """`one` copied to the config's warehouse, MONTH's rows again under each of `labels` after the first."""
    warehouse = config.warehouse_path
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    warehouse.unlink(missing_ok=True)
    Path(f"{warehouse}.wal").unlink(missing_ok=True)
    shutil.copyfile(one, warehouse)
    # each month's landing: links to the built month's Parquet files and its manifest
    one_landed = one_config_landed(one)
    landed: dict[Month, Path] = {}
    for month in labels:
        landed_dir = config.landed_dir(month)
        shutil.rmtree(landed_dir, ignore_errors=True)
        landed_dir.mkdir(parents=True)
        for file in one_landed.iterdir():
            (landed_dir / file.name).symlink_to(file.resolve())
        landed[month] = landed_dir
        if metrics is not None:
            report_dir = config.report_dir(month)
            report_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(metrics, report_dir / "metrics.json")
    label = str(MONTH)
    with duckdb.connect(str(warehouse)) as con:
        con.execute("set preserve_insertion_order = false")
        for name, (key, columns) in month_tables(con).items():
            where = f"period_id = 'month:{label}'" if key == "period_id" else f"\"{key}\" = '{label}'"
            for back in range(1, len(labels)):
                select = ", ".join(shifted(c, kind, back, label, str(labels[back])) for c, kind in columns)
                con.execute(f"insert into {name} select {select} from {name} where {where}")
        # the landed views over every month's Parquet files, as a build of the months makes them
        views = con.execute("select view_name from duckdb_views() where schema_name = 'landed'").fetchall()
        for (view,) in views:
            con.execute(duckdb_landed_view(view, landed))
        con.execute("checkpoint")


def one_config_landed(warehouse: Path) -> Path:
    """The landed month's directory of the one-month warehouse (<work dir>/data/landed/<cluster>/MONTH)."""
    return warehouse.parent.parent / "data" / "landed" / CLUSTER / str(MONTH)


def cases(warehouse: Path, metrics: Path | None) -> dict[str, tuple[str, list[str], int]]:
    """The questions asked: key -> (what, the command's arguments before the config, the exit code
    expected); a case the month has no example of (an array task in a month without arrays) is left out."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        failure = con.execute(
            "select job_id, gpus from fct_failures order by gpus >= ? desc, gpus desc, job_id limit 1", [LARGE_GPUS]
        ).fetchone()
        if failure is None:  # a small month may have no infrastructure failure: a failed job then
            failure = con.execute(
                "select job_id, gpus from fct_attempts where slurm_state in ('FAILED', 'NODE_FAIL') "
                "order by gpus desc, job_id limit 1"
            ).fetchone()
            kind = "failed job"
        else:
            kind = "infra failure"
        task = con.execute(
            "select job_id from fct_attempts where job_id like '%\\_%' escape '\\' order by job_id limit 1"
        ).fetchone()
        faulty = (
            con.execute(
                "select node, count(*) as faults from fct_node_faults group by node order by faults desc, node"
            ).fetchall()
            or con.execute("select node, 0 from dim_nodes order by node").fetchall()
        )
    lemons = set()
    if metrics is not None:
        figure = json.loads(metrics.read_text()).get("lemon_nodes") or {}
        lemons = {c["node"] for c in figure.get("candidates", [])}
    node = next((n for n, _ in faulty if n in lemons), faulty[0][0] if faulty else None)
    most = "lemon candidate" if node in lemons else "most faults" if faulty and faulty[0][1] else "no fault"
    asked: dict[str, tuple[str, list[str], int]] = {}
    if failure:
        asked["failure"] = (f"explain {kind} ({failure[1]} GPUs)", ["explain", "--job", failure[0]], 0)
    if task:
        asked["array_task"] = ("explain array task", ["explain", "--job", task[0]], 0)
        asked["bare_id"] = ("explain bare array id", ["explain", "--job", task[0].split("_")[0]], 0)
    asked["missing"] = ("explain missing job", ["explain", "--job", MISSING_JOB], 2)
    if node:
        asked["node"] = (f"node ({most})", ["node", node], 0)
    for key in ("failure", "node"):
        if key in asked:
            what, args, code = asked[key]
            asked[f"{key}_json"] = (f"{what} --json", [*args, "--json"], code)
    return asked


def timed(command: list[str], repeat: int) -> tuple[list[float], list[int], str]:
    """Wall seconds and exit codes of `command` in a fresh process each time, this checkout's code;
    the last run's stderr (a refusal's message)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seconds, codes, err = [], [], ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        codes.append(done.returncode)
        err = done.stderr
    return seconds, codes, err


def figures(seconds: list[float], codes: list[int], expected: int) -> dict:
    return {
        "min": round(min(seconds), 3),
        "median": round(statistics.median(seconds), 3),
        "runs": [round(s, 3) for s in seconds],
        "exit_codes": codes,
        "expected_exit": expected,
        "ok": all(c == expected for c in codes),
    }


def archive_pages(one_config: Path, out: Path) -> dict:
    """The month's explanation pages (flows/explain/pages.py write_month_pages) written again into
    `out`, timed alone: how many, their bytes, the largest."""
    from flows.explain.pages import write_month_pages
    from flows.figures.read import read_document

    config = load_config(one_config)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    started = time.perf_counter()
    written = write_month_pages(config, read_document(config.report_dir(MONTH) / "metrics.json"), out)
    seconds = time.perf_counter() - started
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*.html")}
    return {
        "pages": written,
        "nodes": sum(1 for p in sizes if p.startswith("nodes/")),
        "jobs": sum(1 for p in sizes if p.startswith("jobs/")),
        "mb": round(sum(sizes.values()) / 1e6, 2),
        "largest_page_kb": round(max(v for p, v in sizes.items() if "/" in p) / 1e3, 1) if len(sizes) > 1 else 0,
        "index_kb": round(sizes.get("explained.html", 0) / 1e3, 1),
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", type=Path, default=None, help="a simulated month's directory (default: make one)")
    parser.add_argument("--warehouse", type=Path, default=None, help="a built one-month warehouse (default: build)")
    parser.add_argument("--months", type=int, default=12, help="months of the many-month warehouse")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=RESULTS / "explain", help="simulated month, warehouses")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where explain.json goes")
    parser.add_argument("--remake", action="store_true", help="make the many-month warehouse again")
    parser.add_argument("--toy", action="store_true", help="a one-node month (the tests)")
    args = parser.parse_args(argv)
    root = args.workdir.resolve()
    result: dict = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "load_1min": [os.getloadavg()[0]]}
    if args.warehouse is not None:
        one = args.warehouse.resolve()
        if not current_version(one):
            raise SystemExit(f"{one}: not a warehouse of this schema version with {MONTH} built")
        (root / "given").mkdir(parents=True, exist_ok=True)
        one_config = write_demo_config(root / "given", CLUSTER, root / "given" / "reports")
        (root / "given" / "warehouse").mkdir(parents=True, exist_ok=True)
        link = load_config(one_config).warehouse_path
        link.unlink(missing_ok=True)
        link.symlink_to(one)
        data = root / "given" / "data"  # its landed month, for the manifests
        if not data.exists():
            data.symlink_to(one.parent.parent / "data", target_is_directory=True)
        result["build"] = {"built": False, "given": str(one)}
    else:
        result["build"] = build_month(root, SMALL if args.toy else BIG, args.sim)
        one_config = root / f"{CLUSTER}.toml"
        one = load_config(one_config).warehouse_path
    metrics = load_config(one_config).report_dir(MONTH) / "metrics.json"
    metrics = metrics if metrics.exists() else None
    with duckdb.connect(str(one), read_only=True) as con:
        result["one_month"] = {
            "config": str(one_config),
            "size_mib": round(one.stat().st_size / 2**20),
            "rows": {"fct_attempts": con.execute("select count(*) from fct_attempts").fetchone()[0]},
        }
    print(f"making {args.months} months of {one} ...", flush=True)
    many = many_months(one, root / "many", args.months, metrics, args.remake)
    result["many_months"] = many
    print(
        f"{args.months} months: {many['size_mib']:,} MiB, {many['rows']['fct_attempts']:,} attempts "
        f"({many['months_built'][0]}..{many['months_built'][-1]})"
        + (f", made in {many['seconds_to_make']} s" if "seconds_to_make" in many else ", reused"),
        flush=True,
    )
    asked = cases(one, metrics)
    python = [sys.executable]
    imports, codes, _ = timed([*python, "-c", "import flows.cli"], args.repeat)
    result["imports"] = figures(imports, codes, 0)
    result["cases"] = {}
    for key, (what, case_args, expected) in asked.items():
        row = {"what": what, "args": case_args}
        for size, config in (("one_month", result["one_month"]["config"]), ("many_months", many["config"])):
            command = [*python, "-m", "flows.cli", *case_args, "--config", config]
            seconds, codes, err = timed(command, args.repeat)
            row[size] = figures(seconds, codes, expected)
            if not row[size]["ok"]:
                row[size]["stderr"] = err[-2000:]
        row["ratio_many_to_one"] = round(row["many_months"]["median"] / row["one_month"]["median"], 2)
        result["cases"][key] = row
    result["pages"] = archive_pages(Path(result["one_month"]["config"]), root / "pages")
    result["load_1min"].append(os.getloadavg()[0])
    result["target_seconds"] = TARGET_SECONDS
    result["all_within_target"] = all(r["many_months"]["median"] <= TARGET_SECONDS for r in result["cases"].values())

    print(
        f"imports alone (python -c 'import flows.cli'): min {imports and min(imports):.2f} s, "
        f"median {result['imports']['median']:.2f} s"
    )
    print(f"| case | 1 month min / median | {args.months} months min / median | ratio | exit |")
    print("| --- | --- | --- | --- | --- |")
    for row in result["cases"].values():
        one_f, many_f = row["one_month"], row["many_months"]
        exits = "ok" if one_f["ok"] and many_f["ok"] else f"{one_f['exit_codes']} / {many_f['exit_codes']}"
        print(
            f"| {row['what']} | {one_f['min']:.2f} / {one_f['median']:.2f} s | {many_f['min']:.2f} / {many_f['median']:.2f} s "
            f"| {row['ratio_many_to_one']:.2f} | {exits} |"
        )
    pages = result["pages"]
    print(
        f"the month's archive pages: {pages['pages']:,} ({pages['nodes']} nodes, {pages['jobs']} jobs, the index), "
        f"{pages['mb']} MB, a page at most {pages['largest_page_kb']} kB, the index {pages['index_kb']} kB, "
        f"written in {pages['seconds']} s"
    )
    print(f"load (1 min) before and after: {', '.join(f'{x:.1f}' for x in result['load_1min'])}")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "explain.json").write_text(json.dumps(result, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
