"""FLIP-164 style table schemas: the declared ``Schema`` and the validated ``ResolvedSchema``.

``Schema.from_dict`` checks only the JSON shape (types, required fields, data type text);
``SchemaResolver.resolve`` checks the meaning (names, duplicates, metadata keys, primary
key, watermark) and produces a ``ResolvedSchema``. Both raise ``SchemaError`` whose
``details["field"]`` is the JSON path of the offending value (``columns[1].expression``)
and ``details["column"]`` the column name where there is one; data type text that does not
parse raises ``DataTypeError`` with the same two entries added to its details.

Decisions where the interface leaves room:
- ``from_dict`` ignores unknown keys (so a resolved column dict may be sent back as is);
  ``columns`` is required, ``watermarks`` may be missing or null.
- Metadata keys match case-insensitively; the resolved column carries the canonical key.
- "Available columns" lists every column in declaration order.
- The default primary key name joins the columns as declared in the schema (their case).
- An expression type the typer does not return stays None and makes
  ``expressions_resolved`` False; a type is never invented.

Where each part lives: ``declared`` (``Schema`` and its columns), ``resolved``
(``ResolvedSchema``), ``resolver`` (``SchemaResolver``, ``ExpressionTyper``,
``METADATA_KEYS``) and ``json_fields`` (reading the JSON form, path by path); every public
name is importable from ``core.schema``.
"""

from __future__ import annotations

from core.schema.declared import (
    ColumnKind,
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    UnresolvedColumn,
    WatermarkSpec,
)
from core.schema.resolved import (
    ResolvedColumn,
    ResolvedPrimaryKey,
    ResolvedSchema,
    ResolvedWatermark,
)
from core.schema.resolver import (
    METADATA_KEYS,
    ExpressionTyper,
    SchemaResolver,
)

__all__ = [
    "METADATA_KEYS",
    "ColumnKind",
    "ComputedColumn",
    "ExpressionTyper",
    "MetadataColumn",
    "PhysicalColumn",
    "PrimaryKey",
    "ResolvedColumn",
    "ResolvedPrimaryKey",
    "ResolvedSchema",
    "ResolvedWatermark",
    "Schema",
    "SchemaResolver",
    "UnresolvedColumn",
    "WatermarkSpec",
]
