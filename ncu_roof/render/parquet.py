"""`--format parquet`: the launch table (ncu_roof.analysis.launches) as one Parquet file.

One row per launch, the columns of `Analysis.to_arrow()`: every kernel value with its unit in its
name, plus its input's path, format and ncu version and its device's name, clock and roofs, so
files collected over many runs can be queried together (DuckDB, Polars, Spark, pandas). The
schema metadata holds, under `ncu-roof`, the document's header as JSON: its schema name, the
inputs, the devices with every roof and where it came from, and the collect command.
"""

from __future__ import annotations

import json
from io import BytesIO

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import to_arrow
from ncu_roof.render.jsonout import analysis_header

METADATA_KEY = b"ncu-roof"


def render_parquet(analysis: Analysis) -> bytes:
    import pyarrow.parquet as pq

    table = to_arrow(analysis)
    header = json.dumps(analysis_header(analysis), ensure_ascii=False, allow_nan=False)
    table = table.replace_schema_metadata({METADATA_KEY: header.encode()})
    buffer = BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()
