"""``ANALYZE TABLE p COMPUTE STATISTICS [NOSCAN | FOR ALL COLUMNS | FOR COLUMNS a, b, …]``.

Spark's own ANALYZE TABLE needs a table of its session catalog; Tessera's tables are
registered as temporary views, so the statement is Tessera's: the planner resolves the
permanent table and its columns, checks that the user holds ``MODIFY`` on the table
(ADR 0011: statistics are its metadata) and hands a worker a plan
(action ``analyze_table``) that reads the table through its usual relation and computes
the figures with DataFrame aggregations in one pass (``engine/analyze_table.py``).

Modes (``args.mode``): ``noscan`` (files and size only, no Spark scan), ``table`` (also
the row count) and ``columns`` (also per-column figures). What a column gets depends on its
type (``args.columns[].stats``): ``full`` (null and distinct counts, min, max; ``avg`` for
numbers), ``length`` for strings and binary (null and distinct counts, average and
maximum length) and ``nulls`` for ARRAY, MAP and STRUCT (and a column whose type is not
known yet).
"""

from __future__ import annotations

from typing import Any, Literal

from core.datatypes import DataType
from core.errors import CoreError
from core.identifiers import name_key, quote_part
from core.planner import guard
from core.planner.errors import UnsupportedStatement
from core.planner.plan import Action, Plan
from core.planner.statement import Statement, missing_relation
from core.planner.table_plans import staged_error, table_plan
from core.planner.tokens import Token
from core.privileges import Privilege

ANALYZE_ALIAS = "__tessera_r1"
StatsKind = Literal["full", "length", "nulls"]
_NUMERIC = frozenset({"INTEGRAL", "FRACTIONAL", "DECIMAL"})
_COMPLEX = frozenset({"ARRAY", "MAP", "STRUCT"})


def column_stats_kind(data_type: DataType | None) -> StatsKind:
    """Which figures a column of this type gets (see the module's docstring)."""
    if data_type is None or data_type.family in _COMPLEX:
        return "nulls"
    if data_type.family in ("STRING", "BINARY"):
        return "length"
    return "full"


def plan_analyze(statement: Statement) -> Plan:
    """``ANALYZE TABLE p COMPUTE STATISTICS [NOSCAN | FOR ALL COLUMNS | FOR COLUMNS …]``."""
    cursor = statement.cursor(1)
    if not cursor.accept_words("TABLE"):
        token = cursor.peek()
        if token is not None and token.is_word("TABLES"):
            raise UnsupportedStatement(
                "ANALYZE TABLES is not supported: analyze one table at a time with "
                "ANALYZE TABLE <name> COMPUTE STATISTICS."
            )
        raise cursor.error("TABLE")
    parts, _, _ = cursor.path("a table name")
    guard.check_file_path_table(parts)
    if cursor.peek_words("PARTITION"):
        raise UnsupportedStatement(
            "ANALYZE TABLE … PARTITION (…) is not supported: Tessera computes the statistics "
            "of the whole table."
        )
    cursor.expect_words("COMPUTE", "STATISTICS")
    mode = "table"
    requested: list[tuple[str, Token]] = []
    if cursor.accept_words("NOSCAN"):
        mode = "noscan"
    elif cursor.accept_words("FOR"):
        mode = "columns"
        if not cursor.accept_words("ALL", "COLUMNS"):
            cursor.expect_words("COLUMNS")
            while True:
                name = cursor.expect_name("a column name")
                requested.append((name, cursor.tokens[cursor.position - 1]))
                if not cursor.accept_punct(","):
                    break
    cursor.expect_end()
    ident = statement.object_identifier(parts)
    relation = statement.find_relation(ident)
    shown = relation.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(relation.identifier.parts)}
    if relation.temporary:
        what = "temporary view" if relation.kind == "view" else "temporary table"
        raise CoreError(
            f"ANALYZE TABLE works on catalog tables only: {shown} is a {what}.",
            details=details,
        )
    if relation.kind == "view":
        raise CoreError(f"ANALYZE TABLE works on tables only: {shown} is a view.", details=details)
    if relation.status == "staged":
        raise staged_error(relation)
    # Statistics are the table's metadata, and their figures (min, max) its data: MODIFY.
    statement.authorizer.require(
        relation, Privilege.MODIFY, missing=lambda: missing_relation(ident)
    )
    schema = relation.resolved_schema
    by_key = {name_key(c.name): c for c in (schema.columns if schema is not None else ())}
    if mode != "columns":
        chosen = []
    elif not requested:
        chosen = list(by_key.values())
    else:
        chosen = []
        seen: set[str] = set()
        for name, token in requested:
            column = by_key.get(name_key(name))
            if column is None:
                raise CoreError(
                    f"Table {shown} has no column {quote_part(name)}.",
                    details={**details, "column": name, "field": "sql"},
                )
            if name_key(name) in seen:
                raise cursor.error_at(token, f"The column {quote_part(name)} is named twice")
            seen.add(name_key(name))
            chosen.append(column)
    columns = [
        {
            "name": column.name,
            "data_type": None if column.data_type is None else column.data_type.sql(),
            "stats": column_stats_kind(column.data_type),
        }
        for column in chosen
    ]
    relations = (
        ()
        if mode == "noscan"
        else (
            table_plan(
                ANALYZE_ALIAS,
                relation,
                statement.context.storage_roots,
                statement.context.uploads,
                statement.context.pipeline_job,
            ),
        )
    )
    return Plan.of(
        Action.ANALYZE_TABLE,
        needs_spark=True,
        relations=relations,
        target=relation.identifier.parts,
        args={
            "identifier": list(relation.identifier.parts),
            "mode": mode,
            "alias": ANALYZE_ALIAS if relations else None,
            "columns": columns,
        },
    )
