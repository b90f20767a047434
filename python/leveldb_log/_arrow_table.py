"""Reader.to_arrow()'s table: the one place the Reader imports pyarrow, which is optional."""

from __future__ import annotations

import importlib
from typing import Any


def reader_table(reader: Any, offset_type: str, data_type: str) -> Any:
    """The rest of reader's records as a pyarrow.Table, read through its Arrow C stream in the
    column types named (checked by the caller, Reader.to_arrow: pyarrow's own type names)."""
    try:
        pa = importlib.import_module("pyarrow")
    except ImportError as e:
        needs = "Reader.to_arrow() needs pyarrow: pip install 'leveldb-log[arrow]'"
        raise ImportError(needs) from e
    # the columns are never null: the schema the stream itself exports
    schema = pa.schema(
        [
            pa.field("offset", getattr(pa, offset_type)(), nullable=False),
            pa.field("data", getattr(pa, data_type)(), nullable=False),
        ]
    )
    return pa.RecordBatchReader.from_stream(reader, schema=schema).read_all()
