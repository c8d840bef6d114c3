"""Stage 2, warehouse: build the dbt models (staging -> intermediate -> marts) on DuckDB or Spark."""
