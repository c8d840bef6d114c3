"""One writer per log format, mirroring the pipeline's reader of each."""
