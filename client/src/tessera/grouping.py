"""Grouped and aggregated tables (``group_by``, ``aggregate``) and the column operations
(``add_columns``, ``drop_columns``, ``rename_columns``) that read a table's schema first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from tessera.errors import ValidationError
from tessera.expressions import IntoExpression, name_of, to_node

if TYPE_CHECKING:
    from tessera.table import Table


def _error(message: str, **details: object) -> ValidationError:
    return ValidationError("VALIDATION_ERROR", message, dict(details))


def projections(fields: tuple[IntoExpression, ...], what: str) -> list[exp.Expr]:
    """Projection nodes of ``fields`` (SQL text or expressions); at least one."""
    if not fields:
        raise _error(f"{what}() needs at least one expression.")
    return [to_node(field, alias=True) for field in fields]


class GroupedTable:
    """A table grouped by expressions; :meth:`select` gives the aggregated table."""

    def __init__(self, table: Table, keys: list[exp.Expr]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: IntoExpression) -> Table:
        """``SELECT fields FROM table GROUP BY keys``."""
        query = self._table._base()
        query.set("expressions", projections(fields, "select"))
        if self._keys:
            query = query.group_by(*[k.copy() for k in self._keys], copy=False)
        return self._table._new(query)

    def aggregate(self, *aggregates: IntoExpression) -> AggregatedTable:
        """The group keys and named aggregates as a table; ``.select(...)`` picks from it."""
        return AggregatedTable(self._table, self._keys, projections(aggregates, "aggregate"))


class AggregatedTable:
    """``SELECT keys, aggregates FROM table GROUP BY keys``, to select from (PyFlink's
    ``aggregate(...).select(...)``)."""

    def __init__(self, table: Table, keys: list[exp.Expr], aggregates: list[exp.Expr]) -> None:
        self._table = table
        self._keys = keys
        self._aggregates = aggregates

    def select(self, *fields: IntoExpression) -> Table:
        """Columns of the aggregated rows: the keys (by name) and the aggregates' names."""
        inner = self._table._base()
        named_keys = [k.copy() for k in self._keys if name_of(k) is not None]
        inner.set("expressions", [*named_keys, *[a.copy() for a in self._aggregates]])
        if self._keys:
            inner = inner.group_by(*[k.copy() for k in self._keys], copy=False)
        aggregated = self._table._new(inner)
        query = exp.select(*projections(fields, "select")).from_(aggregated._from())
        return self._table._new(query)


def _column_name(field: IntoExpression, what: str) -> str:
    node = to_node(field)
    if not isinstance(node, exp.Column) or node.args.get("table") is not None:
        raise _error(f"{what}() takes column names (col('a') or 'a'), not {node.sql()!r}.")
    return node.name


def _index(names: list[str]) -> dict[str, str]:
    """Spark's names are case-insensitive: lower-cased name → the name as the table has it."""
    return {name.lower(): name for name in names}


def _column(name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name, quoted=True))


def add_columns(table: Table, fields: tuple[IntoExpression, ...], *, replace: bool) -> Table:
    """``SELECT *, fields`` (``replace``: a field named as a column takes its place)."""
    nodes = projections(fields, "add_or_replace_columns" if replace else "add_columns")
    added: dict[str, exp.Expr] = {}
    for node in nodes:
        name = name_of(node)
        if name is None:
            raise _error(f"An added column needs a name: {node.sql()!r} (use .alias('name')).")
        if name.lower() in added and not replace:
            raise _error(f"Column {name!r} is added twice.", column=name)
        added[name.lower()] = node
    existing = table.get_schema().column_names
    have = _index(existing)
    clashes = [name for name in added if name in have]
    if clashes and not replace:
        first = have[clashes[0]]
        raise _error(
            f"Column {first!r} exists already: use add_or_replace_columns() to replace it.",
            column=first,
        )
    select: list[exp.Expr] = []
    for name in existing:
        select.append(added.pop(name.lower()) if name.lower() in added else _column(name))
    select.extend(added.values())
    return table._new(exp.select(*select).from_(table._from()))


def drop_columns(table: Table, fields: tuple[IntoExpression, ...]) -> Table:
    """Every column but ``fields``."""
    if not fields:
        raise _error("drop_columns() needs at least one column.")
    existing = table.get_schema().column_names
    have = _index(existing)
    dropped = set()
    for field in fields:
        name = _column_name(field, "drop_columns")
        if name.lower() not in have:
            raise _error(f"Column {name!r} not found; the table has {existing}.", column=name)
        dropped.add(name.lower())
    kept = [_column(name) for name in existing if name.lower() not in dropped]
    if not kept:
        raise _error("drop_columns() would drop every column.")
    return table._new(exp.select(*kept).from_(table._from()))


def rename_columns(table: Table, fields: tuple[IntoExpression, ...]) -> Table:
    """Columns renamed: ``col("a").alias("b")`` or ``"a AS b"``."""
    if not fields:
        raise _error("rename_columns() needs at least one renaming.")
    existing = table.get_schema().column_names
    have = _index(existing)
    renames: dict[str, str] = {}
    for field in fields:
        node = to_node(field, alias=True)
        if not isinstance(node, exp.Alias) or not isinstance(node.this, exp.Column):
            raise _error(
                f"rename_columns() takes col('old').alias('new'), not {node.sql()!r}.",
            )
        old = node.this.name
        if old.lower() not in have:
            raise _error(f"Column {old!r} not found; the table has {existing}.", column=old)
        renames[old.lower()] = node.alias
    final = [renames.get(name.lower(), name) for name in existing]
    seen: set[str] = set()
    for name in final:
        if name.lower() in seen:
            raise _error(f"After renaming, two columns are named {name!r}.", column=name)
        seen.add(name.lower())
    select = [
        exp.alias_(_column(name), renames[name.lower()], quoted=True)
        if name.lower() in renames
        else _column(name)
        for name in existing
    ]
    return table._new(exp.select(*select).from_(table._from()))
