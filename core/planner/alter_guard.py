"""The guard of a planned ALTER TABLE / COMMENT ON TABLE / OPTIMIZE / VACUUM (ADR 0019,
"ALTER TABLE", "Maintenance"): Spark's parse of the text the worker runs must be exactly the
planned change of exactly the table's directory (``delta.`<path>```), else ``ForbiddenSql``
and nothing runs.

A CHECK constraint's expression and OPTIMIZE's WHERE reach Spark as strings inside the
command: the worker checks them separately as expressions of built-ins
(``SqlGuard.check(…, "expression")``). OPTIMIZE's ZORDER columns are outside the described
tree (Delta keeps them in a second parameter list): the worker reads them from the parsed
command and ``check_zorder`` compares them.

Pure Python: the tree arrives as JSON text; nothing here imports pyspark or Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.identifiers import name_key
from core.planner.alter_tables import SPARK_CLASSES, allowed_property
from core.planner.errors import ForbiddenSql
from core.planner.spark_tree import Ref, SparkTree

_SAYS = "Spark reads this ALTER TABLE"


def _refuse(what: str) -> ForbiddenSql:
    return ForbiddenSql(
        f"{_SAYS} differently from the change that was planned ({what}); nothing was run.",
        details={"checked_by": "spark_parser"},
    )


def _short(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].rstrip("$")


def _option(tree: SparkTree, ref: Ref) -> list[Ref]:
    """An Option's items (``None`` or a scalar: none)."""
    return tree.items(ref) if tree.node(ref) is not None else []


def _field_name(tree: SparkTree, ref: Ref) -> list[str] | None:
    node = tree.node(ref)
    if node is None or _short(tree.class_name(node)) != "UnresolvedFieldName":
        return None
    return tree.strings(tree.fields(node).get("name"))


def _names_match(found: Sequence[str] | None, planned: Sequence[str]) -> bool:
    return found is not None and [name_key(p) for p in found] == [name_key(p) for p in planned]


def check_alter_tree(tree: SparkTree, change: Mapping[str, Any], path: str) -> None:
    """Refuse unless ``tree`` is the planned ``change`` of the Delta table at ``path``."""
    op = str(change.get("op"))
    node = tree.node(tree.root)
    expected = SPARK_CLASSES.get(op)
    if node is None or expected is None or _short(tree.class_name(node)) != expected:
        shown = _short(tree.class_name(node)) if node is not None else "nothing"
        raise _refuse(f"{shown}, not {expected or op}")
    fields = tree.fields(node)
    table = tree.node(fields.get("table", fields.get("child")))
    parts = (
        tree.strings(tree.fields(table).get("multipartIdentifier")) if table is not None else None
    )
    if (
        table is None
        or _short(tree.class_name(table)) != "UnresolvedTable"
        or parts != ["delta", path]
    ):
        raise _refuse("another table")
    _CHECKS[op](tree, fields, change)


def _add_columns(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    columns = tree.items(fields.get("columnsToAdd"))
    planned = list(change.get("columns") or [])
    if len(columns) != len(planned):
        raise _refuse("other columns")
    for ref, column in zip(columns, planned, strict=True):
        node = tree.node(ref)
        f = tree.fields(node) if node is not None else {}
        name = _field_name(tree, f.get("path"))
        names = [*(name or []), str(f.get("colName"))]
        if not _names_match(names, [column["name"]]):
            raise _refuse("another column name")
        if _option(tree, f.get("position")) or _option(tree, f.get("default")):
            raise _refuse("a position or a default")


def _rename(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    if not _names_match(_field_name(tree, fields.get("column")), [change["column"]]):
        raise _refuse("another column")
    if name_key(str(fields.get("newName"))) != name_key(change["to"]):
        raise _refuse("another new name")


def _drop(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    found = [_field_name(tree, ref) for ref in tree.items(fields.get("columnsToDrop"))]
    planned = list(change.get("columns") or [])
    if len(found) != len(planned) or not all(
        _names_match(f, [p]) for f, p in zip(found, planned, strict=True)
    ):
        raise _refuse("other columns")


def _alter_column(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    specs = tree.items(fields.get("specs"))
    if len(specs) != 1:
        raise _refuse("more than one column")
    node = tree.node(specs[0])
    f = tree.fields(node) if node is not None else {}
    if not _names_match(_field_name(tree, f.get("column")), [change["column"]]):
        raise _refuse("another column")
    if (
        _option(tree, f.get("newDataType"))
        or _option(tree, f.get("newPosition"))
        or _option(tree, f.get("newDefaultExpression"))
        or f.get("dropDefault") is not False
    ):
        raise _refuse("a type, a position or a default")
    nullability = _option(tree, f.get("newNullability"))
    comment = _option(tree, f.get("newComment"))
    op = change["op"]
    expected_null = {"set_not_null": [False], "drop_not_null": [True]}.get(op, [])
    expected_comment = [change["comment"]] if op == "column_comment" else []
    if nullability != expected_null or comment != expected_comment:
        raise _refuse("another change of the column")


def _add_constraint(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    if name_key(str(fields.get("constraintName"))) != name_key(change["name"]):
        raise _refuse("another constraint name")
    if fields.get("expr") != change["expression"]:
        raise _refuse("another expression")


def _drop_constraint(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    if name_key(str(fields.get("constraintName"))) != name_key(change["name"]):
        raise _refuse("another constraint name")


def _set_properties(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    node = tree.node(fields.get("properties"))
    if node is None or node[0] != "m":
        raise _refuse("no properties")
    items = node[1:]
    found = {str(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)}
    for key, value in found.items():
        allowed_property(key, value if isinstance(value, str) else None)
    if found != dict(change.get("properties") or {}):
        raise _refuse("other properties")


def _unset_properties(
    tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]
) -> None:
    keys = tree.strings(fields.get("propertyKeys"))
    for key in keys or []:
        allowed_property(key, None)
    if keys != list(change.get("keys") or []):
        raise _refuse("other properties")


def _comment_table(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    if fields.get("comment") != change["comment"]:
        raise _refuse("another comment")


def _optimize(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    where = change.get("where")
    if tree.strings(fields.get("userPartitionPredicates")) != ([where] if where else []):
        raise _refuse("another WHERE")
    context = tree.node(fields.get("optimizeContext"))
    f = tree.fields(context) if context is not None else {}
    options = ("reorg", "minFileSize", "maxFileSize", "maxDeletedRowsRatio")
    if context is None or any(_option(tree, f.get(k)) for k in options) or f.get("isFull"):
        raise _refuse("FULL, a purge or file sizes")


def check_zorder(found: Sequence[Sequence[str]], change: Mapping[str, Any]) -> None:
    """The ZORDER BY columns Spark read (name parts each) are the planned ones."""
    planned = list(change.get("zorder") or [])
    if len(found) != len(planned) or not all(
        _names_match(f, [p]) for f, p in zip(found, planned, strict=True)
    ):
        raise _refuse("other ZORDER BY columns")


def _vacuum(tree: SparkTree, fields: Mapping[str, Ref], change: Mapping[str, Any]) -> None:
    hours = [tree.node(r) for r in _option(tree, fields.get("horizonHours"))]
    found = [float(n[1]) for n in hours if n is not None and n[0] == "n"]
    if found != [float(change["retain_hours"])] or len(hours) != 1:
        raise _refuse("another retention")
    if fields.get("dryRun") is not bool(change.get("dry_run")):
        raise _refuse("another DRY RUN")
    if any(
        _option(tree, fields.get(k)) for k in ("inventoryTable", "inventoryQuery", "vacuumType")
    ):
        raise _refuse("an inventory or a vacuum type")


_CHECKS = {
    "add_columns": _add_columns,
    "rename_column": _rename,
    "drop_columns": _drop,
    "column_comment": _alter_column,
    "set_not_null": _alter_column,
    "drop_not_null": _alter_column,
    "add_constraint": _add_constraint,
    "drop_constraint": _drop_constraint,
    "set_properties": _set_properties,
    "unset_properties": _unset_properties,
    "comment_table": _comment_table,
    "optimize": _optimize,
    "vacuum": _vacuum,
}
