"""Table schemas that several test modules use: one definition each."""

from __future__ import annotations

from typing import Any

from core.datatypes import AtomicType
from core.schema import PhysicalColumn, Schema

# The docs/api.md example table: physical, computed and metadata columns, a watermark, a PK.
RICH_SCHEMA: dict[str, Any] = {
    "columns": [
        {"name": "id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "price", "kind": "physical", "data_type": "DECIMAL(10, 2)"},
        {"name": "qty", "kind": "physical", "data_type": "INT"},
        {"name": "total", "kind": "computed", "expression": "price * qty"},
        {
            "name": "file",
            "kind": "metadata",
            "data_type": "STRING",
            "metadata_key": "file_path",
            "virtual": True,
        },
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
    ],
    "watermarks": [{"column": "ts", "expression": "ts - INTERVAL 5 SECONDS"}],
    "primary_key": {"name": "pk_t", "columns": ["id"]},
}


# One BIGINT column ``id``: a core ``Schema``, and the resolved JSON a write's staging records.
ID_SCHEMA = Schema(columns=(PhysicalColumn("id", AtomicType("BIGINT")),))
ID_SCHEMA_JSON: dict[str, Any] = {
    "columns": [{"name": "id", "kind": "physical", "data_type": "BIGINT", "nullable": True}],
    "watermarks": [],
    "primary_key": None,
}
