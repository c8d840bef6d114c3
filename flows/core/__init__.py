"""Shared foundations every stage uses: months, the config schema, errors and exit codes, atomic writes, escaping, retries, the run lock."""
