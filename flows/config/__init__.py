"""A cluster's configuration: the TOML file's typed schema (cluster.py, its `[[sources]]` tables
flows/ingest/sources/source_config.py's, its value types flows/core/config_types.py's) and reading a
file into it with errors that name the file and the key (file.py)."""
