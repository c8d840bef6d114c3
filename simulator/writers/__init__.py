"""One writer per log format, mirroring the readers in `flows.ingest.sources`."""
