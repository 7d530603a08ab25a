"""A team's kernel performance across commits and GPUs: a Parquet dataset (`store`), the rows of
a run (`record`), its queries through DuckDB (`query`), the noise-aware gate (`check`) and the
re-derivation of stored runs with this version's recipe (`rebuild`). docs/history.md."""
