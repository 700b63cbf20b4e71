"""Schema evolution and constraints of managed Delta tables (ADR 0019, "ALTER TABLE"):

    ALTER TABLE p ADD COLUMN[S] (c type [NOT NULL] [COMMENT '…'], …)
    ALTER TABLE p RENAME COLUMN a TO b
    ALTER TABLE p DROP COLUMN[S] [IF EXISTS] c | (c, …)
    ALTER TABLE p ALTER [COLUMN] c COMMENT '…' | SET NOT NULL | DROP NOT NULL
    ALTER TABLE p ADD CONSTRAINT n CHECK (expr)
    ALTER TABLE p DROP CONSTRAINT [IF EXISTS] n
    ALTER TABLE p SET TBLPROPERTIES ('k' = 'v', …) | UNSET TBLPROPERTIES [IF EXISTS] ('k', …)
    COMMENT ON TABLE p IS '…'

The target must be a managed Delta table the user may MANAGE. The planner writes the
statement again in one canonical form naming the table by ``ALTER_ALIAS``; the worker names
the table's directory instead (``delta.`<path>```), checks that Spark parses exactly the
planned command of that table (``SqlGuard.alter_table``) and runs Delta's command; FINISHED
records the version it committed and the catalog's schema changed by ``args["change"]``
(``apply_change``) in one transaction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from core import options as table_options
from core.errors import CoreError
from core.identifiers import ObjectIdentifier, name_key, quote_part
from core.planner import guard
from core.planner.alter_changes import change_sql
from core.planner.errors import UnsupportedStatement
from core.planner.functions import is_builtin
from core.planner.grants import not_in_reference, plan_alter
from core.planner.model import Relation
from core.planner.plan import Action, Plan
from core.planner.references import analyze_query
from core.planner.row_changes import ONLY_DELTA, refuse_other_kinds
from core.planner.sources import is_managed_delta
from core.planner.statement import Statement, data_type, expression_span, type_span
from core.planner.table_plans import table_plan
from core.planner.tokens import TokenCursor, tokenize
from core.planner.write_plans import TARGET_ALIAS, _missing_target
from core.privileges import Privilege
from core.schema import ResolvedColumn

ALTER_ALIAS = TARGET_ALIAS.format(1)

# Table properties a user may set or unset on a managed Delta table (lower case -> Delta's
# spelling): behaviour and retention only. Column mapping, the change data feed and anything
# naming locations stay as Tessera set them (readers and the undo of a change rely on them).
_SPARK_KEYS = {
    k.lower(): k
    for k in (
        "delta.appendOnly",
        "delta.autoOptimize.optimizeWrite",
        "delta.autoOptimize.autoCompact",
        "delta.dataSkippingNumIndexedCols",
        "delta.logRetentionDuration",
        "delta.deletedFileRetentionDuration",
        "delta.checkpointInterval",
        "delta.enableDeletionVectors",
        "delta.targetFileSize",
        "delta.tuneFileSizesForRewrites",
    )
}
ALLOWED_PROPERTIES = frozenset(_SPARK_KEYS.values())
# Allowed keys whose value is fixed: turning deletion vectors off is refused.
_FIXED_VALUES = {"delta.enabledeletionvectors": "true"}
PROPERTIES_REFUSED = (
    "Only these table properties may be changed on a managed Delta table: "
    + ", ".join(sorted(ALLOWED_PROPERTIES))
    + ". Column mapping, the change data feed and locations stay as Tessera set them."
)
MAX_COMMENT = 4096
# Compaction settings: switches, and a file size within bounds (a tiny target makes a file per
# row, a huge one a single task per table).
_SWITCHES = frozenset({"delta.autooptimize.optimizewrite", "delta.autooptimize.autocompact"})
MIN_TARGET_FILE_SIZE = 1 << 20
MAX_TARGET_FILE_SIZE = 1 << 30
_SIZE = re.compile(r"\s*(\d{1,13})\s*(b|kb?|mb?|gb?)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}

# change op -> the Spark parse's root class (engine.sqlguard checks it).
SPARK_CLASSES = {
    "add_columns": "AddColumns",
    "rename_column": "RenameColumn",
    "drop_columns": "DropColumns",
    "column_comment": "AlterColumns",
    "set_not_null": "AlterColumns",
    "drop_not_null": "AlterColumns",
    "add_constraint": "AlterTableAddConstraint",
    "drop_constraint": "AlterTableDropConstraint",
    "set_properties": "SetTableProperties",
    "unset_properties": "UnsetTableProperties",
    "comment_table": "CommentOnTable",
    "optimize": "OptimizeTableCommand",
    "vacuum": "VacuumTableCommand",
}
OPERATION = "ALTER TABLE"


def _comment_text(cursor: TokenCursor) -> str:
    text = cursor.expect_string("a comment string")
    if len(text) > MAX_COMMENT:
        raise CoreError(f"A comment is at most {MAX_COMMENT} characters.")
    return text


def allowed_property(key: str, value: str | None) -> None:
    """Refuse a table property outside the allow-list (or a fixed one changed)."""
    lowered = key.strip().lower()
    if lowered not in _SPARK_KEYS:
        raise UnsupportedStatement(
            f"Table property '{key}' cannot be changed. {PROPERTIES_REFUSED}",
            details={"property": key},
        )
    fixed = _FIXED_VALUES.get(lowered)
    if fixed is not None and (value is None or value.strip().lower() != fixed):
        raise UnsupportedStatement(
            f"Table property '{key}' stays '{fixed}' on managed Delta tables: MERGE, UPDATE "
            "and DELETE rely on deletion vectors.",
            details={"property": key},
        )
    if value is None:
        return
    if lowered in _SWITCHES and value.strip().lower() not in ("true", "false"):
        raise CoreError(f"Table property '{key}' is 'true' or 'false'.", details={"property": key})
    if lowered == "delta.targetfilesize":
        size = _byte_size(value)
        if size is None or not MIN_TARGET_FILE_SIZE <= size <= MAX_TARGET_FILE_SIZE:
            raise CoreError(
                f"Table property '{key}' is a size from 1mb to 1gb (such as '128mb' or "
                f"'134217728'), not '{value}'.",
                details={"property": key},
            )


def _byte_size(value: str) -> int | None:
    """A size as Delta reads it (bytes, or with a unit b, k, kb, m, mb, g, gb)."""
    found = _SIZE.fullmatch(value)
    if found is None:
        return None
    return int(found.group(1)) * _UNITS[(found.group(2) or "").lower()[:1]]


def _properties(cursor: TokenCursor, values: bool) -> dict[str, str | None]:
    cursor.expect_punct("(")
    found: dict[str, str | None] = {}
    while True:
        key = cursor.expect_string("a property key in quotes")
        value: str | None = None
        if values:
            cursor.expect_punct("=")
            value = cursor.expect_string("a property value in quotes")
        allowed_property(key, value)
        found[_SPARK_KEYS[key.strip().lower()]] = value
        if not cursor.accept_punct(","):
            break
    cursor.expect_punct(")")
    return found


def check_expression(
    statement: Statement, first: int, last: int, what: str = "A CHECK constraint"
) -> str:
    """An expression Delta evaluates (a CHECK constraint, OPTIMIZE's WHERE): columns,
    literals and Spark's built-ins only."""
    text = statement.text[first:last]
    masked = "SELECT " + text
    refs = analyze_query(masked, tuple(tokenize(masked)))
    user_functions = [f for f in refs.functions if len(f.parts) > 1 or not is_builtin(f.parts[0])]
    if refs.tables or user_functions:
        raise UnsupportedStatement(
            f"{what} reads only the row's columns with Spark's built-in functions: "
            "no tables, views or user functions."
        )
    return text


def _add_columns(statement: Statement, cursor: TokenCursor) -> dict[str, Any]:
    parenthesized = cursor.accept_punct("(")
    columns: list[dict[str, Any]] = []
    while True:
        name = cursor.expect_name("a column name")
        first, last = type_span(cursor, ("COMMENT", "DEFAULT", "FIRST", "AFTER"))
        column_type = data_type(statement, first, last, f"column `{name}`")
        column: dict[str, Any] = {"name": name, "data_type": column_type.sql()}
        if cursor.peek_words("DEFAULT") or cursor.peek_words("FIRST"):
            raise UnsupportedStatement(
                "ADD COLUMNS takes a name, a type, NOT NULL and a COMMENT: defaults and "
                "positions are not supported."
            )
        if cursor.accept_words("COMMENT"):
            column["comment"] = _comment_text(cursor)
        if cursor.peek_words("DEFAULT") or cursor.peek_words("AFTER"):
            raise UnsupportedStatement(
                "ADD COLUMNS takes a name, a type, NOT NULL and a COMMENT: defaults and "
                "positions are not supported."
            )
        columns.append(column)
        if not (parenthesized and cursor.accept_punct(",")):
            break
    if parenthesized:
        cursor.expect_punct(")")
    return {"op": "add_columns", "columns": columns}


def _parse_alter(statement: Statement, cursor: TokenCursor) -> dict[str, Any]:
    if cursor.accept_words("ADD"):
        if cursor.accept_words("CONSTRAINT"):
            name = cursor.expect_name("a constraint name")
            cursor.expect_words("CHECK")
            cursor.expect_punct("(")
            first, last = expression_span(cursor)
            expression = check_expression(statement, first.start, last.end)
            cursor.expect_punct(")")
            return {"op": "add_constraint", "name": name, "expression": expression}
        if not (cursor.accept_words("COLUMNS") or cursor.accept_words("COLUMN")):
            raise cursor.error("COLUMNS or CONSTRAINT")
        return _add_columns(statement, cursor)
    if cursor.accept_words("RENAME"):
        if cursor.peek_words("TO"):
            raise UnsupportedStatement(
                "ALTER TABLE … RENAME TO is not supported: a managed table keeps its name."
            )
        cursor.expect_words("COLUMN")
        column = cursor.expect_name("a column name")
        cursor.expect_words("TO")
        return {"op": "rename_column", "column": column, "to": cursor.expect_name("a new name")}
    if cursor.accept_words("DROP"):
        if cursor.accept_words("CONSTRAINT"):
            if_exists = cursor.accept_words("IF", "EXISTS")
            name = cursor.expect_name("a constraint name")
            return {"op": "drop_constraint", "name": name, "if_exists": if_exists}
        if not (cursor.accept_words("COLUMNS") or cursor.accept_words("COLUMN")):
            raise cursor.error("COLUMN or CONSTRAINT")
        if_exists = cursor.accept_words("IF", "EXISTS")
        if cursor.accept_punct("("):
            names = [cursor.expect_name("a column name")]
            while cursor.accept_punct(","):
                names.append(cursor.expect_name("a column name"))
            cursor.expect_punct(")")
        else:
            names = [cursor.expect_name("a column name")]
        return {"op": "drop_columns", "columns": names, "if_exists": if_exists}
    if cursor.accept_words("ALTER") or cursor.accept_words("CHANGE"):
        cursor.accept_words("COLUMN")
        column = cursor.expect_name("a column name")
        if cursor.accept_words("COMMENT"):
            return {"op": "column_comment", "column": column, "comment": _comment_text(cursor)}
        if cursor.accept_words("SET", "NOT", "NULL"):
            return {"op": "set_not_null", "column": column}
        if cursor.accept_words("DROP", "NOT", "NULL"):
            return {"op": "drop_not_null", "column": column}
        raise cursor.error("COMMENT '…', SET NOT NULL or DROP NOT NULL")
    if cursor.accept_words("SET", "TBLPROPERTIES"):
        return {"op": "set_properties", "properties": _properties(cursor, values=True)}
    if cursor.accept_words("UNSET", "TBLPROPERTIES"):
        if_exists = cursor.accept_words("IF", "EXISTS")
        keys = list(_properties(cursor, values=False))
        return {"op": "unset_properties", "keys": keys, "if_exists": if_exists}
    raise cursor.error(
        "ADD COLUMNS, RENAME COLUMN, DROP COLUMN, ALTER COLUMN, ADD CONSTRAINT, DROP "
        "CONSTRAINT, SET TBLPROPERTIES or UNSET TBLPROPERTIES"
    )


def stored_columns(table: Relation, names: Sequence[str], instead: str) -> list[ResolvedColumn]:
    """The columns ``names`` name, each existing and physical: computed and metadata columns
    are Tessera's (virtual), not the Delta table's (``instead`` says what to do then)."""
    schema = table.resolved_schema
    columns = {name_key(c.name): c for c in schema.columns} if schema is not None else {}
    shown = table.identifier.quoted()
    found: list[ResolvedColumn] = []
    for name in names:
        column = columns.get(name_key(name))
        if column is None:
            raise CoreError(f"Table {shown} has no column `{name}`.", details={"column": name})
        if column.kind != "physical":
            raise UnsupportedStatement(
                f"Column `{name}` of {shown} is a {column.kind} column (Tessera's, not stored "
                f"in the Delta table): {instead}.",
                details={"column": name},
            )
        found.append(column)
    return found


def _check_columns(table: Relation, change: Mapping[str, Any]) -> None:
    """The columns a change names exist (or not, for new ones) and are physical: computed
    and metadata columns are Tessera's (virtual), not the Delta table's."""
    schema = table.resolved_schema
    columns = {name_key(c.name): c for c in schema.columns} if schema is not None else {}
    shown = table.identifier.quoted()
    named: list[str] = []
    op = change["op"]
    if op in ("rename_column", "column_comment", "set_not_null", "drop_not_null"):
        named = [change["column"]]
    elif op == "drop_columns" and not change.get("if_exists"):
        named = list(change["columns"])
    stored_columns(table, named, "change it in the table's schema instead")
    new: list[str] = []
    if op == "add_columns":
        new = [c["name"] for c in change["columns"]]
    elif op == "rename_column":
        new = [change["to"]]
    for name in new:
        if name_key(name) in columns:
            raise CoreError(
                f"Table {shown} already has a column `{name}`.", details={"column": name}
            )
    if op == "drop_columns" and schema is not None:
        dropped = {name_key(n) for n in change["columns"]}
        left = [
            c for c in schema.columns if c.kind == "physical" and name_key(c.name) not in dropped
        ]
        if not left:
            raise CoreError(f"Table {shown} would have no column left.")


def manageable_delta_table(
    statement: Statement,
    ident: ObjectIdentifier,
    what: str = OPERATION,
    hint: str = "change its schema in the catalog (PATCH /tables/…)",
    external_hint: str = "; change an external table's schema in the catalog (PATCH /tables/…)",
) -> Relation:
    """A managed Delta table the user may MANAGE, active, with a committed version (the
    target of ``what``: ALTER TABLE, OPTIMIZE, VACUUM); the hints end the refusals of
    tables in Tessera's own format and of external ones."""
    relation = refuse_other_kinds(statement, ident, what, external_hint)
    shown = relation.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(relation.identifier.parts)}
    only = ONLY_DELTA
    if not is_managed_delta(relation):
        raise UnsupportedStatement(
            f"Table {shown} is stored in Tessera's own format: {what} changes {only}; {hint}.",
            details=details,
        )
    if relation.status != "active":
        raise CoreError(
            f"Table {shown} is {relation.status} and cannot be changed.", details=details
        )
    statement.authorizer.require(relation, Privilege.MANAGE, missing=lambda: _missing_target(ident))
    if relation.delta_version is None:
        raise CoreError(
            f"Table {shown} has no committed version yet; INSERT INTO it first.",
            details=details,
        )
    return relation


def _plan(statement: Statement, parts: Sequence[str], change: dict[str, Any]) -> Plan:
    ident = statement.object_identifier(tuple(parts))
    table = manageable_delta_table(statement, ident)
    _check_columns(table, change)
    operation = OPERATION if change["op"] != "comment_table" else "COMMENT ON TABLE"
    return table_change_plan(statement, table, change, Action.ALTER_TABLE, operation)


def table_change_plan(
    statement: Statement,
    table: Relation,
    change: dict[str, Any],
    action: Action,
    operation: str,
) -> Plan:
    """The plan of Delta's command ``change`` on ``table`` (checked by the caller): what
    the worker runs (``engine.row_changes``) and the guard checks (``alter_guard``)."""
    context = statement.context
    target = table_plan(ALTER_ALIAS, table, context.storage_roots)
    args: dict[str, Any] = {
        "identifier": list(table.identifier.parts),
        "operation": operation,
        "table": target.to_dict(),
        "location": table.location,
        "managed": True,
        "format": table_options.DELTA,
        "read_version": table.delta_version,
        "change": change,
    }
    return Plan.of(
        action,
        needs_spark=True,
        sql=change_sql(change, quote_part(ALTER_ALIAS)),
        target=table.identifier.parts,
        args=args,
    )


def _outside_delta(statement: Statement, parts: Sequence[str]) -> None:
    """A table Tessera stores in its own format, or an external one, keeps the refusal every
    ALTER outside the SQL reference has (its schema changes in the catalog)."""

    relation = statement.reader.get_relation(statement.object_identifier(tuple(parts)))
    if (
        relation is not None
        and statement.authorizer.see(relation) is not None
        and relation.kind == "table"
        and not relation.temporary
        and not is_managed_delta(relation)
    ):
        raise not_in_reference(statement)


def plan_alter_table(statement: Statement) -> Plan:
    """``ALTER TABLE p <change>`` of a managed Delta table → action ``alter_table``."""
    cursor = statement.cursor(2)
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts, "Changing")
    _outside_delta(statement, parts)
    change = _parse_alter(statement, cursor)
    cursor.expect_end()
    return _plan(statement, parts, change)


def plan_comment_on(statement: Statement) -> Plan:
    """``COMMENT ON TABLE p IS '…'`` of a managed Delta table → action ``alter_table``."""
    cursor = statement.cursor(1)
    cursor.expect_words("ON")
    if not cursor.accept_words("TABLE"):
        raise UnsupportedStatement(
            "COMMENT ON changes only tables (managed Delta tables): COMMENT ON TABLE p IS '…'."
        )
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts, "Changing")
    _outside_delta(statement, parts)
    cursor.expect_words("IS")
    comment = "" if cursor.accept_words("NULL") else _comment_text(cursor)
    cursor.expect_end()
    return _plan(statement, parts, {"op": "comment_table", "comment": comment})


def is_alter_table_change(statement: Statement) -> bool:
    """``ALTER TABLE p …`` other than ``… [SET] OWNER TO`` (which ``grants.plan_alter`` plans)."""
    tokens = statement.tokens
    if not (len(tokens) > 2 and tokens[1].is_word("TABLE")):
        return False
    cursor = statement.cursor(2)
    try:
        cursor.path("a table name")
    except CoreError:
        return False
    return not (cursor.peek_words("OWNER") or cursor.peek_words("SET", "OWNER"))


def plan_alter_statement(statement: Statement) -> Plan:
    """Every ALTER: a managed Delta table's change here, the rest as ``grants.plan_alter``."""
    if is_alter_table_change(statement):
        return plan_alter_table(statement)
    return plan_alter(statement)
