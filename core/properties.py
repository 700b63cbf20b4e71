"""FLIP-164 / Flink-style catalog properties: a table as a flat ``dict[str, str]``.

Keys written by ``encode_table``:

- ``schema.N.name`` for every column N (0-based, contiguous);
- ``schema.N.data-type`` (physical and metadata columns) or ``schema.N.expr`` (computed);
- ``schema.N.metadata`` (metadata key, only when set) and ``schema.N.virtual``
  (``"true"``/``"false"``, always written for metadata columns);
- ``schema.N.comment`` when the column has a comment;
- ``schema.watermark.N.rowtime`` and ``schema.watermark.N.strategy.expr``;
- ``schema.primary-key.name`` (when set) and ``schema.primary-key.columns``: names joined
  with ``,``; a name that is empty, contains ``,`` or a backtick, or has leading/trailing
  whitespace is backtick-quoted with backticks doubled;
- ``partition.keys.N.name``;
- every option as is (option keys must not start with a reserved prefix).

Decoding rule for column kinds: a column is a metadata column iff ``schema.N.metadata`` or
``schema.N.virtual`` is present; otherwise it is computed iff ``schema.N.expr`` is present
(a ``schema.N.data-type`` beside it, as Flink writes, must parse and is otherwise ignored)
and physical iff ``schema.N.data-type`` is present. Indices are non-negative decimal
integers without leading zeros. On decode, whitespace around unquoted primary key column
names is ignored. ``decode_table(encode_table(s, o, p)) == (s, dict(o), list(p))``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from core.datatypes import DataType, parse_data_type
from core.errors import DataTypeError, PropertiesError
from core.schema import (
    ComputedColumn,
    MetadataColumn,
    PhysicalColumn,
    PrimaryKey,
    Schema,
    UnresolvedColumn,
    WatermarkSpec,
)

RESERVED_PREFIXES = ("schema.", "partition.keys.")

_SCHEMA = "schema."
_WATERMARK = "schema.watermark."
_PK_NAME = "schema.primary-key.name"
_PK_COLUMNS = "schema.primary-key.columns"
_PARTITION = "partition.keys."
_COLUMN_ATTRIBUTES = ("name", "data-type", "expr", "metadata", "virtual", "comment")
_WATERMARK_ATTRIBUTES = ("rowtime", "strategy.expr")
_NO_OPTIONS: Mapping[str, str] = MappingProxyType({})


def _error(message: str, key: str, **extra: object) -> PropertiesError:
    return PropertiesError(message, details={"key": key, **extra})


# ---------------------------------------------------------------------------------------
# Primary key column lists.


def _needs_quotes(name: str) -> bool:
    return name == "" or "," in name or "`" in name or name != name.strip()


def _join_names(names: Sequence[str]) -> str:
    return ",".join(
        "`" + name.replace("`", "``") + "`" if _needs_quotes(name) else name for name in names
    )


def _split_names(text: str, key: str) -> tuple[str, ...]:
    """Split a column list written by ``_join_names`` (a small hand-written scanner)."""

    def fail(what: str, position: int) -> PropertiesError:
        return _error(
            f"{what} at position {position} in primary key column list '{text}'.",
            key,
            text=text,
            position=position,
        )

    if text == "":
        return ()
    names: list[str] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        start = pos
        if pos < len(text) and text[pos] == "`":
            chars: list[str] = []
            pos += 1
            while True:
                if pos >= len(text):
                    raise fail("Unclosed backtick", start)
                if text[pos] == "`":
                    if text[pos + 1 : pos + 2] != "`":
                        pos += 1
                        break
                    pos += 1  # doubled backtick: keep one
                chars.append(text[pos])
                pos += 1
            name = "".join(chars)
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos < len(text) and text[pos] != ",":
                raise fail("Expected ',' after a quoted column name", pos)
        else:
            end = text.find(",", pos)
            end = len(text) if end == -1 else end
            name = text[pos:end].strip()
            if not name:
                raise fail("Empty column name", start)
            if "`" in name:
                raise fail("Unexpected backtick", text.index("`", pos))
            pos = end
        names.append(name)
        if pos >= len(text):
            return tuple(names)
        pos += 1  # the comma


# ---------------------------------------------------------------------------------------
# Encoding.


def encode_table(
    schema: Schema,
    options: Mapping[str, str] = _NO_OPTIONS,
    partition_by: Sequence[str] = (),
) -> dict[str, str]:
    """Flatten a schema, its options and partition columns into catalog properties."""
    properties: dict[str, str] = {}
    for i, column in enumerate(schema.columns):
        prefix = f"schema.{i}."
        properties[prefix + "name"] = column.name
        if isinstance(column, ComputedColumn):
            properties[prefix + "expr"] = column.expression
        else:
            properties[prefix + "data-type"] = column.data_type.sql()
        if isinstance(column, MetadataColumn):
            if column.metadata_key is not None:
                properties[prefix + "metadata"] = column.metadata_key
            properties[prefix + "virtual"] = "true" if column.virtual else "false"
        if column.comment is not None:
            properties[prefix + "comment"] = column.comment
    for i, watermark in enumerate(schema.watermarks):
        properties[f"{_WATERMARK}{i}.rowtime"] = watermark.column
        properties[f"{_WATERMARK}{i}.strategy.expr"] = watermark.expression
    if schema.primary_key is not None:
        if schema.primary_key.name is not None:
            properties[_PK_NAME] = schema.primary_key.name
        properties[_PK_COLUMNS] = _join_names(schema.primary_key.columns)
    for i, name in enumerate(partition_by):
        properties[f"{_PARTITION}{i}.name"] = name
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _error(f"Option {key!r} must have a string key and a string value.", str(key))
        for prefix in RESERVED_PREFIXES:
            if key.startswith(prefix):
                raise _error(f"Option key '{key}' uses the reserved prefix '{prefix}'.", key)
        properties[key] = value
    return properties


# ---------------------------------------------------------------------------------------
# Decoding.


def _index(text: str, key: str) -> int:
    if not (text.isascii() and text.isdigit()) or (len(text) > 1 and text.startswith("0")):
        raise _error(
            f"Property key '{key}' has an invalid index '{text}'; "
            "indices are non-negative integers without leading zeros.",
            key,
        )
    return int(text)


def _check_contiguous(entries: Mapping[int, Mapping[str, str]]) -> None:
    """``entries`` maps index -> attribute -> property key; indices must be 0..n-1."""
    for expected, actual in enumerate(sorted(entries)):
        if actual != expected:
            key = sorted(entries[actual].values())[0]
            raise _error(
                f"Property key '{key}' skips index {expected}; indices must be contiguous from 0.",
                key,
            )


def _unknown(key: str) -> PropertiesError:
    return _error(f"Unknown property key '{key}'.", key)


def _parse_type(text: str, key: str) -> DataType:
    try:
        return parse_data_type(text)
    except DataTypeError as error:
        raise DataTypeError(error.message, details=dict(error.details, key=key)) from None


def _decode_column(
    i: int, keys: Mapping[str, str], properties: Mapping[str, str]
) -> UnresolvedColumn:
    def value(attribute: str) -> str | None:
        return properties[keys[attribute]] if attribute in keys else None

    def key(attribute: str) -> str:
        return f"schema.{i}.{attribute}"

    name = value("name")
    if name is None:
        raise _error(f"Property '{key('name')}' is missing.", key("name"))
    data_type, expression = value("data-type"), value("expr")
    if data_type is not None and expression is not None:
        # Flink writes a computed column's resolved type beside its expression. We accept
        # that encoding (it must still parse) but keep only the expression: typing it is
        # the resolver's job, against the table's actual columns.
        _parse_type(data_type, key("data-type"))
    comment = value("comment")
    is_metadata = "metadata" in keys or "virtual" in keys
    if expression is not None:
        if is_metadata:
            extra = "metadata" if "metadata" in keys else "virtual"
            raise _error(f"Computed column `{name}` must not have '{key(extra)}'.", key(extra))
        return ComputedColumn(name, expression, comment)
    if data_type is None:
        raise _error(
            f"Column `{name}` needs '{key('data-type')}' or '{key('expr')}'.", key("data-type")
        )
    parsed = _parse_type(data_type, key("data-type"))
    if not is_metadata:
        return PhysicalColumn(name, parsed, comment)
    virtual = value("virtual")
    if virtual not in (None, "true", "false"):
        raise _error(
            f"Property '{key('virtual')}' must be 'true' or 'false', got '{virtual}'.",
            key("virtual"),
        )
    return MetadataColumn(
        name, parsed, metadata_key=value("metadata"), virtual=virtual == "true", comment=comment
    )


def decode_table(properties: Mapping[str, str]) -> tuple[Schema, dict[str, str], list[str]]:
    """Rebuild (schema, options, partition columns) from catalog properties."""
    columns: dict[int, dict[str, str]] = {}  # index -> attribute -> property key
    watermarks: dict[int, dict[str, str]] = {}
    partitions: dict[int, dict[str, str]] = {}
    options: dict[str, str] = {}
    for key, value in properties.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _error(f"Property {key!r} must have a string key and a string value.", str(key))
        if key.startswith(_PARTITION):
            index_text, _, attribute = key[len(_PARTITION) :].partition(".")
            if attribute != "name":
                raise _unknown(key)
            partitions.setdefault(_index(index_text, key), {})[attribute] = key
        elif key in (_PK_NAME, _PK_COLUMNS):
            pass  # read below
        elif key.startswith(_WATERMARK):
            index_text, _, attribute = key[len(_WATERMARK) :].partition(".")
            if attribute not in _WATERMARK_ATTRIBUTES:
                raise _unknown(key)
            watermarks.setdefault(_index(index_text, key), {})[attribute] = key
        elif key.startswith(_SCHEMA):
            index_text, _, attribute = key[len(_SCHEMA) :].partition(".")
            if attribute not in _COLUMN_ATTRIBUTES:
                raise _unknown(key)
            columns.setdefault(_index(index_text, key), {})[attribute] = key
        else:
            options[key] = value
    for entries in (columns, watermarks, partitions):
        _check_contiguous(entries)

    decoded_columns = tuple(_decode_column(i, columns[i], properties) for i in range(len(columns)))
    decoded_watermarks: list[WatermarkSpec] = []
    for i in range(len(watermarks)):
        parts: list[str] = []
        for attribute in _WATERMARK_ATTRIBUTES:
            key = f"{_WATERMARK}{i}.{attribute}"
            if key not in properties:
                raise _error(f"Property '{key}' is missing.", key)
            parts.append(properties[key])
        decoded_watermarks.append(WatermarkSpec(parts[0], parts[1]))
    primary_key = None
    if _PK_NAME in properties or _PK_COLUMNS in properties:
        if _PK_COLUMNS not in properties:
            raise _error(f"Property '{_PK_COLUMNS}' is missing.", _PK_COLUMNS)
        primary_key = PrimaryKey(
            properties.get(_PK_NAME), _split_names(properties[_PK_COLUMNS], _PK_COLUMNS)
        )
    partition_by = [properties[f"{_PARTITION}{i}.name"] for i in range(len(partitions))]
    schema = Schema(decoded_columns, tuple(decoded_watermarks), primary_key)
    return schema, options, partition_by
