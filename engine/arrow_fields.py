"""Arrow columns with Spark's nullability at every depth, also where PySpark's own ``toArrow``
fails.

Spark may say a struct is nullable and one of its fields is not (``IF(c, named_struct('x',
1), NULL)``). Arrow can hold that (a NULL struct's fields are masked by the struct), but
``pyarrow``'s cast to such a type refuses nulls in the child, so PySpark's ``toArrow`` raises
``ArrowInvalid``. Here the column is converted with every nested field nullable
(``relaxed``) and then rebuilt in the exact type (``conform``), buffers shared, no copy of
values.
"""

from __future__ import annotations

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]


def relaxed(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with every field, element and value inside it nullable."""
    types = pa.types
    if types.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, relaxed(f.type), True, f.metadata) for f in arrow_type])
    if types.is_map(arrow_type):
        return pa.map_(
            pa.field(arrow_type.key_field.name, relaxed(arrow_type.key_type), False),
            pa.field(arrow_type.item_field.name, relaxed(arrow_type.item_type), True),
        )
    if types.is_large_list(arrow_type):
        value = arrow_type.value_field
        return pa.large_list(pa.field(value.name, relaxed(value.type), True))
    if types.is_list(arrow_type):
        value = arrow_type.value_field
        return pa.list_(pa.field(value.name, relaxed(value.type), True))
    return arrow_type


def _mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _rebuilt(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """``array`` (of ``relaxed(arrow_type)``) as ``arrow_type``."""
    types = pa.types
    if array.type == arrow_type:
        return array
    if types.is_struct(arrow_type):
        children = [_rebuilt(array.field(i), f.type) for i, f in enumerate(arrow_type)]
        return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=_mask(array))
    if types.is_map(arrow_type):
        # ``keys``/``items`` are the whole children: the slice's offsets index them as they are.
        return pa.MapArray.from_arrays(
            array.offsets,
            _rebuilt(array.keys, arrow_type.key_type),
            _rebuilt(array.items, arrow_type.item_type),
            type=arrow_type,
            mask=_mask(array),
        )
    if types.is_list(arrow_type) or types.is_large_list(arrow_type):
        kind = pa.LargeListArray if types.is_large_list(arrow_type) else pa.ListArray
        # ``flatten`` gives the values of this slice; offsets start again at 0.
        offsets = pc.subtract(array.offsets, array.offsets[0])
        values = _rebuilt(array.flatten(), arrow_type.value_type)
        return kind.from_arrays(offsets, values, type=arrow_type, mask=_mask(array))
    return array


def conform(column: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """``column`` cast to ``arrow_type``, nested NOT NULL kept even under a NULL parent."""
    try:
        return column.cast(arrow_type)
    except pa.ArrowInvalid:
        return _rebuilt(column.cast(relaxed(arrow_type)), arrow_type)


def conform_chunked(column: pa.ChunkedArray, arrow_type: pa.DataType) -> pa.ChunkedArray:
    """``conform`` chunk by chunk."""
    return pa.chunked_array([conform(c, arrow_type) for c in column.chunks], type=arrow_type)
