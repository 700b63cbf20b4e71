"""Classify a statement by its leading tokens and hand it to its planner.

Statements Tessera does not run are refused here with a sentence: ``ForbiddenSql`` for
what could reach past the catalog (or is not in the SQL reference), ``UnsupportedStatement``
for what is recognised but not run, ``ParseError`` for text that is not SQL at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import cast

from core import limits
from core.errors import CoreError, PermissionDenied
from core.identifiers import ObjectIdentifier
from core.limits import CheckedStatement, StatementTooDeep
from core.planner import guard, streaming
from core.planner.alter_tables import plan_alter_statement, plan_comment_on
from core.planner.analyze import plan_analyze
from core.planner.authorize import Authorizer
from core.planner.ddl import is_ctas, plan_create_table
from core.planner.errors import ForbiddenSql
from core.planner.grants import not_in_reference, plan_grant, plan_revoke
from core.planner.model import CatalogReader, PlanContext
from core.planner.objects import (
    plan_create_catalog,
    plan_create_database,
    plan_create_function,
    plan_create_view,
    plan_drop,
    plan_drop_temporary,
)
from core.planner.pipelines import plan_execute_pipeline
from core.planner.plan import ACTION_KINDS, AccessPlan, Action, Plan, PlanKind
from core.planner.queries import plan_query, starts_query
from core.planner.resolve import Resolver
from core.planner.row_changes import plan_delete, plan_merge, plan_update
from core.planner.session import plan_reset, plan_set, plan_use
from core.planner.show import plan_describe, plan_show
from core.planner.statement import Statement
from core.planner.table_maintenance import plan_maintenance
from core.planner.tokens import (
    Token,
    parse_error,
    statement_groups,
    strip_region,
    tokenize,
    unterminated_at,
)
from core.planner.write_plans import plan_ctas, plan_insert, plan_statement_set

# First words of statements that could reach past the catalog, with the reason.
_FORBIDDEN: dict[str, str] = {
    "ADD": "{} is not allowed: Tessera does not load code or files into Spark.",
    "LIST": "{} is not allowed: it shows files and jars loaded into Spark.",
    "LOAD": "LOAD DATA is not allowed: it reads files by path, bypassing the catalog.",
    "CACHE": "{} is not allowed: Spark's cache is shared by every session and bypasses the "
    "catalog.",
    "UNCACHE": "{} is not allowed: Spark's cache is shared by every session and bypasses the "
    "catalog.",
    "CLEAR": "{} is not allowed: Spark's cache is shared by every session.",
    "REFRESH": "{} is not allowed: it addresses Spark's own catalog or files by path.",
    "MSCK": "{} is not allowed: it addresses Spark's own catalog.",
    "REPAIR": "{} is not allowed: it addresses Spark's own catalog.",
}

# Other first words of Spark SQL statements: SQL, but not in Tessera's SQL reference.
_OTHER_STATEMENTS = frozenset(
    {
        "BEGIN",
        "CALL",
        "COMMENT",
        "COMMIT",
        "COPY",
        "DECLARE",
        "DROP",
        "EXECUTE",
        "EXPORT",
        "FOR",
        "IF",
        "IMPORT",
        "ITERATE",
        "LEAVE",
        "LOCK",
        "LOOP",
        "REPEAT",
        "REPLACE",
        "RESTORE",
        "ROLLBACK",
        "SIGNAL",
        "START",
        "TRUNCATE",
        "UNLOCK",
        "UNSET",
        "UPSERT",
        "WHILE",
    }
)


def _leading_words(statement: Statement, count: int) -> str:
    return " ".join(t.upper or t.text for t in statement.tokens[:count])


def _plan_create(statement: Statement) -> Plan:
    """``CREATE [OR REPLACE] [TEMPORARY [SYSTEM]] <kind> …``."""
    cursor = statement.cursor(1)
    or_replace = cursor.accept_words("OR", "REPLACE")
    if cursor.peek_words("GLOBAL"):
        raise ForbiddenSql(
            "CREATE GLOBAL TEMPORARY … is not allowed: Spark's global temporary views "
            "(`global_temp`) are shared by every session; use CREATE TEMPORARY VIEW."
        )
    # TEMP is Spark's synonym of TEMPORARY.
    temporary = cursor.accept_words("TEMPORARY") or cursor.accept_words("TEMP")
    system = temporary and cursor.accept_words("SYSTEM")
    token = cursor.peek()
    word = token.upper if token is not None else ""
    if system and word != "FUNCTION":
        raise cursor.error("FUNCTION")
    if temporary and word not in ("TABLE", "VIEW", "FUNCTION"):
        if token is None:
            raise cursor.error("TABLE, VIEW or FUNCTION")
        shown = _leading_words(statement, cursor.position + 1)
        raise ForbiddenSql(
            f"{shown} is not supported: Tessera creates temporary tables, views and functions."
        )
    if word in ("CATALOG", "DATABASE", "SCHEMA", "TABLE", "FUNCTION") and or_replace:
        shown = f"TEMPORARY {word}" if temporary else word
        raise ForbiddenSql(
            f"CREATE OR REPLACE {shown} is not supported: drop the object and create it again."
        )
    cursor.position += 1
    if word == "CATALOG":
        return plan_create_catalog(statement, cursor)
    if word in ("DATABASE", "SCHEMA"):
        return plan_create_database(statement, cursor)
    if word == "TABLE":
        if not temporary and is_ctas(statement.tokens, cursor.position - 1):
            return plan_ctas(statement, cursor.position - 1)
        return plan_create_table(statement, cursor.position - 1, temporary=temporary)
    if word == "VIEW":
        return plan_create_view(statement, cursor, or_replace, temporary=temporary)
    if word == "FUNCTION":
        return plan_create_function(statement, cursor, temporary=temporary, system=system)
    shown = _leading_words(statement, cursor.position)
    raise ForbiddenSql(
        f"{shown} is not supported: Tessera creates catalogs, databases, tables (with a "
        "column list), views and functions."
    )


def _plan_drop(statement: Statement) -> Plan:
    cursor = statement.cursor(1)
    if cursor.accept_words("TEMPORARY") or cursor.accept_words("TEMP"):
        return plan_drop_temporary(statement, cursor)
    return plan_drop(statement, cursor)


def _plan_execute(statement: Statement) -> Plan:
    cursor = statement.cursor(1)
    if cursor.peek_words("IMMEDIATE"):
        raise ForbiddenSql(
            "EXECUTE IMMEDIATE is not allowed: dynamic SQL cannot be checked before it runs."
        )
    if cursor.peek_words("STATEMENT", "SET"):
        return plan_statement_set(statement)
    if cursor.peek_words("PIPELINE"):
        return plan_execute_pipeline(statement)
    raise ForbiddenSql(
        f"{_leading_words(statement, 2)} is not supported: Tessera runs EXECUTE STATEMENT SET "
        "and EXECUTE PIPELINE only."
    )


EXPLAIN_MODES = ("EXTENDED", "FORMATTED", "CODEGEN", "COST", "LOGICAL")


def plan_explain(statement: Statement) -> Plan:
    """``EXPLAIN [mode] <query>``; the query part is rewritten, the prefix kept."""
    cursor = statement.cursor(1)
    mode = None
    token = cursor.peek()
    if token is not None and token.upper in EXPLAIN_MODES:
        mode = token.upper.lower()
        cursor.next()
    inner = statement.tokens[cursor.position :]
    if not inner:
        raise cursor.error("a query to explain")
    if not starts_query(inner):
        # Let the statement's own rules speak first (INSERT is unsupported, …).
        plan_tokens(
            Statement(
                statement.text,
                inner,
                statement.reader,
                statement.context,
                inner[0].start,
                statement.end,
                statement.authorizer,
            )
        )
        raise ForbiddenSql("EXPLAIN can only explain queries (SELECT, WITH, VALUES, TABLE).")
    context = statement.context
    resolver = Resolver(statement.reader, context, statement.authorizer)
    rewritten = resolver.rewrite_query(
        statement.text, inner, context.current_catalog, context.current_database, statement.end
    )
    _check_explainable(statement)
    prefix = statement.text[statement.start : inner[0].start]
    return Plan.of(
        Action.EXPLAIN,
        needs_spark=True,
        sql=prefix + rewritten.sql,
        relations=tuple(resolver.relations),
        functions=tuple(resolver.functions),
        args={"mode": mode},
    )


def _check_explainable(statement: Statement) -> None:
    """EXPLAIN prints the paths and columns of everything a query reads, views expanded: a
    query reading through another owner's view what the invoker may not read is refused,
    naming only the view the invoker's own text reads (definer rights stop at results)."""
    hidden = statement.authorizer.reads_beyond_invoker()
    if not hidden:
        return
    _, definer = hidden[0]
    view = definer.outermost
    what = view.kind.value
    raise PermissionDenied(
        f"EXPLAIN cannot show {what} {view.sql_path}: it reads, with its owner's rights, "
        f"objects you may not read yourself, and the plan would show their paths and columns. "
        f"Query the {what} instead.",
        details={"kind": what, "identifier": list(view.path), "privilege": "SELECT"},
    )


_HANDLERS: dict[str, Callable[[Statement], Plan]] = {
    "USE": plan_use,
    "SET": plan_set,
    "RESET": plan_reset,
    "SHOW": plan_show,
    "DESCRIBE": plan_describe,
    "DESC": plan_describe,
    "EXPLAIN": plan_explain,
    "CREATE": _plan_create,
    "DROP": _plan_drop,
    "INSERT": plan_insert,
    "EXECUTE": _plan_execute,
    "ANALYZE": plan_analyze,
    "GRANT": plan_grant,
    "REVOKE": plan_revoke,
    "ALTER": plan_alter_statement,
    "MERGE": plan_merge,
    "UPDATE": plan_update,
    "DELETE": plan_delete,
    "COMMENT": plan_comment_on,
    "OPTIMIZE": plan_maintenance,
    "VACUUM": plan_maintenance,
}


def plan_tokens(statement: Statement) -> Plan:
    """Plan a statement whose tokens are known (and passed the statement guard)."""
    if starts_query(statement.tokens):
        return plan_query(statement)
    first = statement.tokens[0]
    word = first.upper
    handler = _HANDLERS.get(word)
    if handler is not None:
        return handler(statement)
    reason = _FORBIDDEN.get(word)
    if reason is not None:
        raise ForbiddenSql(reason.format(_leading_words(statement, 2)))
    if word in _OTHER_STATEMENTS:
        raise not_in_reference(statement)
    shown = statement.text[first.start : first.end]
    raise parse_error(statement.text, first.start, f"Expected a SQL statement but found '{shown}'")


def plan_statement(
    sql: str | CheckedStatement, reader: CatalogReader, context: PlanContext
) -> Plan:
    """Plan one statement (a trailing ';' is allowed); raises a ``CoreError``.

    The statement must be within ``context.limits``, checked before anything else — unless
    the caller already did (``limits.accept_statement`` under those limits): then it is not
    scanned twice. Planning stops with ``PlanningTimeout`` once it has taken
    ``context.budget_seconds``.
    """
    text = limits.ensure_checked(sql, context.limits)
    with limits.planning_budget(context.budget_seconds):
        try:
            return _plan_statement(
                text, cast(CatalogReader, limits.BudgetedReader(reader)), context
            )
        except RecursionError:
            # Nesting the scan does not count (NOT NOT …, a chain of views) can still run out
            # of stack in sqlglot's recursive parser: the same refusal, never a 500.
            raise StatementTooDeep(
                "The statement is nested too deeply for the planner (or reads views nested "
                "too deeply); flatten it, e.g. with a WITH clause.",
                details={"field": "sql", "limit": "depth"},
            ) from None


def plan_function_body(
    body: str, function: ObjectIdentifier, reader: CatalogReader, context: PlanContext
) -> tuple[AccessPlan, ...]:
    """Resolve the SQL body of the permanent function ``function`` as ``reader``'s user (not
    the function's owner): what it calls must be callable by that user, as a view's query
    must be readable by whoever stores it. Raises what a call would (``PermissionDenied``,
    ``NotFound`` for what the user may not see); answers the checks it made. Held to the
    statement limits and the planning budget: the body is planned with every call."""
    limits.check_statement(body, context.limits, what="function body", field="implementation")
    with limits.planning_budget(context.budget_seconds):
        budgeted = cast(CatalogReader, limits.BudgetedReader(reader))
        authorizer = Authorizer(budgeted)
        resolver = Resolver(budgeted, context, authorizer)
        try:
            resolver.function_body(body, function, body, 0)
        except RecursionError:
            raise StatementTooDeep(
                "The function body is nested too deeply for the planner; flatten it.",
                details={"field": "implementation", "limit": "depth"},
            ) from None
        read = resolver.temporary_objects()
        if read:
            raise CoreError(
                f"The function {function.quoted()} cannot call temporary functions "
                f"({', '.join(read)}): a permanent function must only call permanent ones."
            )
    return authorizer.records


def _plan_statement(sql: str, reader: CatalogReader, context: PlanContext) -> Plan:
    tokens = tokenize(sql)
    limits.check_budget()
    groups = statement_groups(tokens, len(sql))
    if not groups:
        raise parse_error(sql, 0, "Expected a SQL statement but found none")
    if len(groups) > 1:
        raise parse_error(
            sql,
            groups[1][2][0].start,
            'Expected one statement but found more: send a script with "script": true',
        )
    begin, end = strip_region(sql, groups[0][0], groups[0][1])
    authorizer = Authorizer(reader)
    statement = Statement(sql, tuple(groups[0][2]), reader, context, begin, end, authorizer)
    guard.check_statement_tokens(statement.tokens)
    limits.check_budget()
    planned = streaming.finish(plan_tokens(statement), context)
    return replace(planned, access=authorizer.records)


# --- the kind of a statement without a plan ---------------------------------------------------

_KIND_BY_FIRST_WORD: dict[str, PlanKind] = {
    "USE": "use",
    "SET": "set",
    "RESET": "set",
    "SHOW": "show",
    "DESCRIBE": "describe",
    "DESC": "describe",
    "EXPLAIN": "explain",
    "CREATE": "ddl",
    "DROP": "ddl",
    "ALTER": "ddl",
    "GRANT": "ddl",
    "REVOKE": "ddl",
    "INSERT": "insert",
    "EXECUTE": "statement_set",
    "ANALYZE": "ddl",
    "MERGE": "insert",
    "UPDATE": "insert",
    "DELETE": "insert",
    "OPTIMIZE": "insert",
    "VACUUM": "insert",
}
_CREATED_KINDS = ("TABLE", "VIEW", "FUNCTION", "CATALOG", "DATABASE", "SCHEMA")


def statement_kind(sql: str) -> PlanKind:
    """The job kind of a statement that has no plan (the planner refused it, or a script's
    statement whose turn has not come): from its first words, as ``plan_tokens`` dispatches
    them; ``query`` for anything else. Never raises: unreadable text is read up to where the
    tokenizer stopped."""
    try:
        tokens: Sequence[Token] = tokenize(sql)
    except CoreError:
        try:
            tokens = tokenize(sql[: unterminated_at(sql)])
        except CoreError:
            return "query"
    if not tokens or starts_query(tokens):
        return "query"
    kind = _KIND_BY_FIRST_WORD.get(tokens[0].upper, "query")
    if kind == "statement_set" and len(tokens) > 1 and tokens[1].is_word("PIPELINE"):
        return ACTION_KINDS[Action.PIPELINE]
    if kind == "ddl" and tokens[0].is_word("CREATE"):
        created = next(
            (i for i, t in enumerate(tokens[:8]) if i and t.is_word(*_CREATED_KINDS)), None
        )
        is_table = created is not None and tokens[created].is_word("TABLE")
        if is_table and created is not None and is_ctas(tuple(tokens), created):
            return ACTION_KINDS[Action.CTAS]
    return kind
