"""``TableEnvironment.from_elements``: Python rows as an inline ``VALUES`` query (no upload).

Every value is a typed literal (:func:`tessera.expressions.lit`); with a :class:`Schema` each
column is cast to its declared type, so a column of NULLs or an empty list still has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlglot import exp

from tessera._expression import literal_node
from tessera.errors import ValidationError
from tessera.literals import cast_node
from tessera.result import Row
from tessera.schema import Schema


def _error(message: str, **details: Any) -> ValidationError:
    return ValidationError("VALIDATION_ERROR", message, details)


def _names_and_types(
    schema: Schema | Sequence[str] | None, first: Any
) -> tuple[list[str], list[str | None]]:
    if isinstance(schema, Schema):
        for column in schema.columns:
            if column.kind != "physical":
                raise _error(
                    f"from_elements() takes physical columns only; {column.name!r} is "
                    f"{column.kind}.",
                    column=column.name,
                )
        return schema.column_names, [c.data_type for c in schema.columns]
    if schema is not None:
        if isinstance(schema, str) or not all(isinstance(n, str) and n for n in schema):
            raise _error("from_elements() takes a Schema or a list of column names as schema.")
        names = list(schema)
    elif isinstance(first, Mapping):
        names = [str(key) for key in first]
    elif isinstance(first, Row):
        names = list(first.fields)
    elif first is None:
        raise _error("from_elements() of no rows needs a Schema (the columns' types).")
    else:
        width = len(first) if _is_row(first) else 1
        names = [f"_{i}" for i in range(1, width + 1)]
    if len({n.lower() for n in names}) != len(names):
        raise _error(f"Column names repeat (Spark's names are case-insensitive): {names}.")
    return names, [None] * len(names)


def _is_row(element: Any) -> bool:
    return isinstance(element, tuple | list | Row)


def _row(element: Any, names: list[str], index: int) -> list[Any]:
    if isinstance(element, Mapping):
        unknown = [k for k in element if k not in names]
        if unknown:
            raise _error(f"Row {index} has keys not in the schema: {unknown}.", row=index)
        return [element.get(name) for name in names]
    values = list(element) if _is_row(element) else [element]
    if len(values) != len(names):
        raise _error(
            f"Row {index} has {len(values)} values; the schema has {len(names)} columns.",
            row=index,
        )
    return values


def values_query(elements: Iterable[Any], schema: Schema | Sequence[str] | None) -> exp.Select:
    """``SELECT … FROM VALUES (…), … AS _v(…)`` of the rows (or ``… WHERE FALSE`` for none)."""
    rows = list(elements)
    names, types = _names_and_types(schema, rows[0] if rows else None)
    if not rows and None in types:
        raise _error("from_elements() of no rows needs a Schema (the columns' types).")
    inner = [f"_c{i}" for i in range(1, len(names) + 1)]
    projections = []
    for name, data_type, source in zip(names, types, inner, strict=True):
        column: exp.Expr = exp.Column(this=exp.to_identifier(source, quoted=True))
        if not rows:
            column = exp.Null()
        if data_type is not None:
            column = cast_node(column, data_type)
        projections.append(exp.alias_(column, name, quoted=True))
    query = exp.select(*projections)
    if not rows:
        return query.where(exp.false())
    tuples = [
        exp.Tuple(expressions=[literal_node(v) for v in _row(row, names, i)])
        for i, row in enumerate(rows)
    ]
    alias = exp.TableAlias(
        this=exp.to_identifier("_v", quoted=True),
        columns=[exp.to_identifier(c, quoted=True) for c in inner],
    )
    return query.from_(exp.Values(expressions=tuples, alias=alias))
