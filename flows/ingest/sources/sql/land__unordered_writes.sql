-- Rows carry their source line: without keeping the file's order DuckDB writes on every core.
set preserve_insertion_order = false
