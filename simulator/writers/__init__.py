"""One writer per log format, mirroring the readers in `flows.sources`."""
