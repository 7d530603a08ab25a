"""`--format parquet`: the launch table (`Analysis.to_arrow()`, a row per launch with its input's
and device's facts) as one Parquet file, so files of many runs can be queried together (DuckDB,
Polars, Spark, pandas). Its schema metadata holds, under `ncu-roof`, the JSON document's header
(schema, inputs, devices with every roof and its source, the collect command).
"""

from __future__ import annotations

import json
from io import BytesIO

from ncu_roof.analysis.core import Analysis
from ncu_roof.analysis.launches import to_arrow
from ncu_roof.render.jsonout import outline

METADATA_KEY = b"ncu-roof"


def render_parquet(analysis: Analysis) -> bytes:
    import pyarrow.parquet as pq

    header = {k: v for k, v in outline(analysis).items() if k != "kernels"}
    text = json.dumps(header, ensure_ascii=False, allow_nan=False)
    table = to_arrow(analysis).replace_schema_metadata({METADATA_KEY: text.encode()})
    buffer = BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()
