"""Pure statistics and altair chart builders over polars frames or a read-only DuckDB connection."""
