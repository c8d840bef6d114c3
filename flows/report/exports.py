"""Fact tables as files people take into their own tools: each table as Parquet (as built) and as
CSV (safe to open in a spreadsheet), described by one Croissant JSON-LD file (`croissant.json`,
MLCommons' dataset format: every file with its SHA-256, every column with its type).

CSV cells are neutralised against formula injection (OWASP "CSV Injection"): a text cell that
begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading apostrophe, so that a
spreadsheet shows it as text instead of running it. The Parquet files keep the values as they are.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import mlcroissant as mlc
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

CROISSANT_FILE = "croissant.json"
# the leading characters a spreadsheet reads as the start of a formula
FORMULA_START = r"^[=+\-@\t\r]"
LICENSE = "https://creativecommons.org/licenses/by/4.0/"


def neutralise_formulas(table: pa.Table) -> pa.Table:
    """`table` with every text cell that a spreadsheet would read as a formula prefixed with `'`."""
    columns = []
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            looks_like_formula = pc.match_substring_regex(column, FORMULA_START)
            column = pc.if_else(looks_like_formula, pc.binary_join_element_wise("'", column, ""), column)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=table.schema)


def croissant_type(arrow_type: pa.DataType) -> str:
    """The Croissant data type of a column of `arrow_type`."""
    if pa.types.is_boolean(arrow_type):
        return mlc.DataType.BOOL
    if pa.types.is_integer(arrow_type):
        return mlc.DataType.INTEGER
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return mlc.DataType.FLOAT
    if pa.types.is_timestamp(arrow_type):
        return mlc.DataType.DATETIME
    if pa.types.is_date(arrow_type):
        return mlc.DataType.DATE
    return mlc.DataType.TEXT


def write_exports(tables: dict[str, pa.Table], out: Path, name: str, description: str, published: date) -> Path:
    """Write each table of `tables` as `<table>.parquet` and `<table>.csv` into `out`, then the
    Croissant file describing them (the dataset `name`, as of `published`); returns its path. The
    same tables give the same bytes."""
    out.mkdir(parents=True, exist_ok=True)
    ctx = mlc.Context()
    files, record_sets = [], []
    for table_name, table in sorted(tables.items()):
        parquet, csv = out / f"{table_name}.parquet", out / f"{table_name}.csv"
        pq.write_table(table, parquet)
        if table.num_columns:
            pa_csv.write_csv(neutralise_formulas(table), csv)
        else:  # a table nobody could query: an empty file, as pyarrow writes no header without columns
            csv.write_bytes(b"")
        for path, encoding in ((parquet, "application/x-parquet"), (csv, "text/csv")):
            files.append(
                mlc.FileObject(
                    ctx=ctx,
                    id=path.name,
                    name=path.name,
                    content_url=path.name,
                    content_size=f"{path.stat().st_size} B",
                    encoding_formats=[encoding],
                    sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                )
            )
        if table.num_columns:
            record_sets.append(_record_set(ctx, table_name, table.schema, parquet.name))
    metadata = mlc.Metadata(
        ctx=ctx,
        name=name,
        description=description,
        license=LICENSE,
        version="1.0.0",
        date_published=published,
        cite_as=f"cluster-reliability-report: {name}",
        distribution=files,
        record_sets=record_sets,
    )
    path = out / CROISSANT_FILE
    path.write_text(json.dumps(metadata.to_json(), indent=1, sort_keys=True, default=str) + "\n")
    return path


def _record_set(ctx: mlc.Context, table_name: str, schema: pa.Schema, file_id: str) -> mlc.RecordSet:
    """The table's columns as a Croissant record set read from its Parquet file."""
    fields = [
        mlc.Field(
            ctx=ctx,
            id=f"{table_name}/{column.name}",
            name=column.name,
            data_types=[croissant_type(column.type)],
            source=mlc.Source(ctx=ctx, file_object=file_id, extract=mlc.Extract(ctx=ctx, column=column.name)),
        )
        for column in schema
    ]
    return mlc.RecordSet(ctx=ctx, id=table_name, name=table_name, fields=fields)
