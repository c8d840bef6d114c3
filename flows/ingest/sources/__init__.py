"""Readers for the source formats: one module per format, each declared in `flows.ingest.sources.registry`.

Shared pieces, one concern each: `errors` (InputFormatError), `quarantine`, `clock` (LocalClock, DST),
`files` (open_text), `parsable` (the parsable2 layout), `sql` (DuckDB helpers), `records` (row objects).
"""
