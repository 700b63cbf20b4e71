"""Changelogs (FLIP-136 ``fromChangelogStream`` / ``toChangelogStream``) as SQL text.

A changelog is rows with a row-kind column ``op``: ``+I`` (insert), ``-U`` (the row before
an update), ``+U`` (the row after it), ``-D`` (delete). Both directions are plain queries,
so they run through the server's planner and SQL guard like every other Table, and the same
text serves the remote client and the in-worker runtime.

- Replaying a changelog (:func:`replay_sql`) with a primary key: per key the last row of the
  log (in log order, ``-U`` rows skipped: they are before-images) decides; ``+I``/``+U``
  keep that row, ``-D`` removes the key. Without a primary key the log is a multiset of
  rows: each ``+I``/``+U`` adds one copy of its row, each ``-U``/``-D`` takes one away.
- The changes between two versions of a table (:func:`changes_sql`) with a primary key:
  ``+I`` for new keys, ``-D`` for keys gone, ``-U`` then ``+U`` for keys whose row changed
  (Delta's change data feed, as net changes). Without a key: ``-D``/``+I`` per row of the
  multiset difference (``EXCEPT ALL``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from tessera.errors import ValidationError
from tessera.sql import quote_identifier, string_literal
from tessera.uploads import to_arrow

if TYPE_CHECKING:
    from tessera.environment import TableEnvironment
    from tessera.schema import Schema
    from tessera.table import Table

OP = "op"
ROW_KINDS = ("+I", "-U", "+U", "-D")
SEQUENCE = "_tessera_seq"
_RANK = "_tessera_rank"


def check_columns(columns: Sequence[str], what: str) -> None:
    """A changelog needs an ``op`` column, and never our own helper columns."""
    if OP not in columns:
        raise ValidationError(
            "VALIDATION_ERROR",
            f"{what} needs a column `op` holding the row kind of each row "
            f"({', '.join(ROW_KINDS)}); it has {', '.join(columns) or 'no columns'}.",
            {"columns": list(columns)},
        )
    if SEQUENCE in columns:
        raise ValidationError(
            "VALIDATION_ERROR",
            f"The column name {SEQUENCE} is reserved for the changelog's order.",
            {"column": SEQUENCE},
        )


def check_row_kinds(values: Sequence[object]) -> None:
    """Every ``op`` value must be one of the four row kinds."""
    bad = sorted({repr(v) for v in values if v not in ROW_KINDS})
    if bad:
        raise ValidationError(
            "VALIDATION_ERROR",
            f"Column `op` holds {', '.join(bad[:5])}{' …' if len(bad) > 5 else ''}; a row kind "
            f"is one of {', '.join(ROW_KINDS)}.",
            {"column": OP, "values": bad[:5]},
        )


def check_key(key: Sequence[str], columns: Sequence[str], what: str) -> None:
    missing = [name for name in key if name not in columns]
    if missing:
        raise ValidationError(
            "VALIDATION_ERROR",
            f"The primary key of {what} names "
            f"{', '.join(quote_identifier(m) for m in missing)}, which it does not have.",
            {"primary_key": list(key)},
        )


def _names(columns: Sequence[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{quote_identifier(c)}" for c in columns)


def _on(key: Sequence[str], left: str, right: str) -> str:
    return " AND ".join(
        f"{left}.{quote_identifier(k)} <=> {right}.{quote_identifier(k)}" for k in key
    )


def replay_sql(
    source: str, columns: Sequence[str], key: Sequence[str], projections: Sequence[str]
) -> str:
    """The query giving the table a changelog describes.

    ``source`` is a FROM item holding ``columns`` (the data), ``op`` and the log order
    ``_tessera_seq``; ``projections`` are the result's select items over the data columns
    (casts and computed columns of a given schema, or the plain names).
    """
    data = _names(columns)
    kinds = ", ".join(string_literal(k) for k in ROW_KINDS)
    checked = (
        f"SELECT {data}, {quote_identifier(OP)}, {quote_identifier(SEQUENCE)} FROM {source} "
        f"WHERE assert_true({quote_identifier(OP)} IN ({kinds}), "
        f"{string_literal('a row kind (op) is one of ' + ', '.join(ROW_KINDS))}) IS NULL"
    )
    if key:
        ranked = (
            f"SELECT {data}, {quote_identifier(OP)}, row_number() OVER (PARTITION BY "
            f"{_names(key)} ORDER BY {quote_identifier(SEQUENCE)} DESC) AS {_RANK} "
            f"FROM ({checked}) AS _log WHERE {quote_identifier(OP)} <> '-U'"
        )
        final = (
            f"SELECT {data} FROM ({ranked}) AS _last "
            f"WHERE {_RANK} = 1 AND {quote_identifier(OP)} IN ('+I', '+U')"
        )
    else:
        counted = (
            f"SELECT {data}, sum(CASE WHEN {quote_identifier(OP)} IN ('+I', '+U') THEN 1 "
            f"ELSE -1 END) AS {_RANK} FROM ({checked}) AS _log GROUP BY {data}"
        )
        final = (
            f"SELECT {data} FROM (SELECT {data}, explode(sequence(1, {_RANK})) AS _copy "
            f"FROM ({counted}) AS _counted WHERE {_RANK} > 0) AS _copies"
        )
    return f"SELECT {', '.join(projections)} FROM ({final}) AS _replayed"


def changes_sql(
    old: str, new: str, columns: Sequence[str], key: Sequence[str], ordered: bool = True
) -> str:
    """The ``op``-tagged changes that turn the rows of FROM item ``old`` into ``new``."""
    data = _names(columns)
    if not key:
        return (
            f"SELECT '-D' AS {quote_identifier(OP)}, {data} FROM "
            f"(SELECT {data} FROM {old} EXCEPT ALL SELECT {data} FROM {new}) AS _gone "
            f"UNION ALL SELECT '+I', {data} FROM "
            f"(SELECT {data} FROM {new} EXCEPT ALL SELECT {data} FROM {old}) AS _come"
        )
    same = " AND ".join(f"_o.{quote_identifier(c)} <=> _n.{quote_identifier(c)}" for c in columns)
    parts = [
        f"SELECT '-D' AS {quote_identifier(OP)}, {_names(columns, '_o.')}, 1 AS {_RANK} "
        f"FROM {old} AS _o LEFT ANTI JOIN {new} AS _n ON {_on(key, '_o', '_n')}",
        f"SELECT '-U', {_names(columns, '_o.')}, 2 FROM {old} AS _o JOIN {new} AS _n "
        f"ON {_on(key, '_o', '_n')} WHERE NOT ({same})",
        f"SELECT '+U', {_names(columns, '_n.')}, 3 FROM {old} AS _o JOIN {new} AS _n "
        f"ON {_on(key, '_o', '_n')} WHERE NOT ({same})",
        f"SELECT '+I', {_names(columns, '_n.')}, 4 FROM {new} AS _n LEFT ANTI JOIN {old} AS _o "
        f"ON {_on(key, '_n', '_o')}",
    ]
    union = " UNION ALL ".join(parts)
    order = f" ORDER BY {_names(key)}, {_RANK}" if ordered else ""
    return f"SELECT {quote_identifier(OP)}, {data} FROM ({union}) AS _changes{order}"


def replay_shape(columns: list[str], schema: Schema | None) -> tuple[tuple[str, ...], list[str]]:
    """The primary key and the select items of a replayed changelog: the data columns as
    they are, or ``schema``'s columns (physical ones cast to their types, computed ones
    computed)."""
    if schema is None:
        return (), [quote_identifier(c) for c in columns]
    projections = []
    for column in schema.columns:
        name = quote_identifier(column.name)
        if column.kind == "computed":
            projections.append(f"{column.expression} AS {name}")
        elif column.kind == "metadata":
            raise ValidationError(
                "VALIDATION_ERROR",
                f"A changelog has no metadata; column {name} cannot be read from it.",
                {"column": column.name},
            )
        elif column.name not in columns:
            raise ValidationError(
                "VALIDATION_ERROR",
                f"The schema names column {name}, which the changelog does not have "
                f"(it has {', '.join(columns)}).",
                {"column": column.name},
            )
        else:
            projections.append(f"CAST({name} AS {column.data_type}) AS {name}")
    key = schema.primary_key.columns if schema.primary_key is not None else ()
    check_key(key, columns, "the schema")
    return key, projections


def from_changelog(env: TableEnvironment, df: Any, schema: Schema | None) -> Table:
    """:meth:`TableEnvironment.from_changelog`: the log uploaded with its order, replayed."""
    if hasattr(df, "toArrow") and hasattr(df, "withColumn"):  # a PySpark DataFrame
        columns = list(df.columns)
        check_columns(columns, "from_changelog()")
        from pyspark.sql import functions  # the [spark] extra

        base = env.from_data_frame(df.withColumn(SEQUENCE, functions.monotonically_increasing_id()))
    else:
        data = to_arrow(df)
        columns = list(data.column_names)
        check_columns(columns, "from_changelog()")
        check_row_kinds(data.column(OP).unique().to_pylist())
        order = pa.array(range(data.num_rows), type=pa.int64())
        base = env.from_arrow(data.append_column(SEQUENCE, order))
    data_columns = [c for c in columns if c != OP]
    key, projections = replay_shape(data_columns, schema)
    source = f"({base.sql}) AS _changelog"
    return env.sql_query(replay_sql(source, data_columns, key, projections))
