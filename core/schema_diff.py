"""What changed between two declared schemas (their JSON form, ``Schema.to_dict``): the
columns added, dropped, retyped, re-commented or moved, and the key and watermarks. For a
table's History tab (the ``alter`` audit events keep the schema before; the schema after is
the next change's before, or the table's schema now). Pure; a malformed side counts as empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The column fields whose change is a change of what the column holds.
_DEFINITION = ("kind", "data_type", "expression", "metadata_key", "virtual")


def _columns(schema: Any) -> list[Mapping[str, Any]]:
    if not isinstance(schema, Mapping):
        return []
    columns = schema.get("columns")
    if not isinstance(columns, list):
        return []
    return [c for c in columns if isinstance(c, Mapping) and isinstance(c.get("name"), str)]


def _definition(column: Mapping[str, Any]) -> str:
    """A column's definition as one line: ``BIGINT``, ``AS (a + 1)``, ``METADATA FROM 'k'``."""
    kind = column.get("kind") or "physical"
    if kind == "computed":
        return f"AS ({column.get('expression') or ''})"
    text = str(column.get("data_type") or "")
    if kind == "metadata":
        key = column.get("metadata_key")
        text += " METADATA" + (f" FROM '{key}'" if key else "")
        if column.get("virtual"):
            text += " VIRTUAL"
    return text


def _key(schema: Any) -> list[str] | None:
    key = schema.get("primary_key") if isinstance(schema, Mapping) else None
    if not isinstance(key, Mapping) or not isinstance(key.get("columns"), list):
        return None
    return [str(c) for c in key["columns"]]


def _watermarks(schema: Any) -> list[str]:
    marks = schema.get("watermarks") if isinstance(schema, Mapping) else None
    if not isinstance(marks, list):
        return []
    return [f"{m.get('column')} AS {m.get('expression')}" for m in marks if isinstance(m, Mapping)]


def _change(kind: str, column: str | None, before: Any, after: Any) -> dict[str, Any]:
    return {"change": kind, "column": column, "before": before, "after": after}


def schema_diff(before: Any, after: Any) -> list[dict[str, Any]]:
    """The changes from ``before`` to ``after``, in column order: ``added``, ``dropped``,
    ``type`` (the definition), ``comment``, ``moved`` (the order of the columns kept),
    ``primary_key`` and ``watermarks``; each ``{change, column, before, after}`` with the
    definitions as text. Column names compare without case, as Spark's do."""
    old = {c["name"].lower(): c for c in _columns(before)}
    new = {c["name"].lower(): c for c in _columns(after)}
    changes: list[dict[str, Any]] = []
    for name, column in new.items():
        was = old.get(name)
        if was is None:
            changes.append(_change("added", column["name"], None, _definition(column)))
            continue
        if any(was.get(field) != column.get(field) for field in _DEFINITION):
            changes.append(_change("type", column["name"], _definition(was), _definition(column)))
        if was.get("comment") != column.get("comment"):
            changes.append(
                _change("comment", column["name"], was.get("comment"), column.get("comment"))
            )
    for name, column in old.items():
        if name not in new:
            changes.append(_change("dropped", column["name"], _definition(column), None))
    kept_before = [name for name in old if name in new]
    kept_after = [name for name in new if name in old]
    if kept_before != kept_after:
        changes.append(
            _change(
                "moved",
                None,
                [old[n]["name"] for n in kept_before],
                [new[n]["name"] for n in kept_after],
            )
        )
    if _key(before) != _key(after):
        changes.append(_change("primary_key", None, _key(before), _key(after)))
    if _watermarks(before) != _watermarks(after):
        changes.append(_change("watermarks", None, _watermarks(before), _watermarks(after)))
    return changes
