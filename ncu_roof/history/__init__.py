"""A team's kernel performance across commits and GPUs: a Parquet dataset (`store`), the rows of
a run (`record`), its queries through DuckDB (`query`), the noise-aware gate (`check`) and the
re-derivation of stored runs with this version's recipe (`rebuild`). docs/history.md."""

BASELINE = 20  # `history check`'s defaults: --baseline (commits), --threshold, --confidence
THRESHOLD_PCT = 5.0  # the smallest slowdown the gate must catch (`base.shift`: it fires from 0.65 of it)
CONFIDENCE = 0.99
