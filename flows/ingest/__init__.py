"""Stage 1, ingest: read each source format (one module per format in `sources/`) and land a month's records as Parquet."""
