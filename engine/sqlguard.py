"""Every text the worker sends to Spark is first parsed by Spark and checked.

The planner's guard (``core.planner.guard``) gives early, friendly errors, but it reads SQL
with sqlglot, and Spark reads it with its own lexer: where the two disagree, text the planner
took for a comment or a string is code for Spark. So before a query, a view's query, a SQL
function or a column expression reaches ``spark.sql``/``selectExpr``, this module parses the
exact text with the job session's own parser (``sessionState.sqlParser``: parse only, no
analysis, no execution), describes the tree (``jvm/TreeDescriber.java``, compiled once per
JVM by Janino, which Spark ships) and hands it to ``core.planner.spark_guard``: every
relation, function and node Spark sees must be one the planner resolved and allowed, and
both must count the same references to the plan's aliases.

The same session, the same conf, the same text: what is checked is what Spark runs. Spark's
``${…}`` variable substitution is off in every session (``runtime`` sets it) and is checked
here before each parse, so no text is rewritten between the check and the run.

On the Spark Connect runtime the job's session lives in the server, out of py4j's reach:
the parse is asked of the job's paired session in the worker's own parser JVM
(``runtime.parser_of``: the same Spark version as the server, checked at connect, with the
Connect session's parser settings), and the substitution setting is read from both the
Connect session and the parser session before each parse.

``install(spark, plan)`` gives a job's session its guard (``registration.register_plan``
does it); ``guard(spark)`` returns it — or, for a session without a plan, a guard that allows
no relation and no registered function at all.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib import resources
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import convert_exception
from pyspark.sql import DataFrame, SparkSession

from core.identifiers import name_key, quote_path
from core.planner import FunctionPlan, Plan, RelationPlan
from core.planner.alter_guard import check_alter_tree, check_zorder
from core.planner.errors import ForbiddenSql
from core.planner.spark_differential import PlannerReading, check_lexing, check_references
from core.planner.spark_guard import Allowed, RootKind, check_tree
from core.planner.spark_tree import SparkTree
from engine import parser_sessions
from engine.errors import UnsupportedRuntime
from engine.runtimes import is_remote_session

log = logging.getLogger(__name__)

# More described parts than this and the statement is refused (a 1 MB statement has far
# fewer); it bounds the describer's memory and the walk's time.
MAX_TREE_NODES = 2_000_000
SUBSTITUTE = "spark.sql.variable.substitute"
# Parameters bound at analysis (true), not written into the text before parsing (false).
CONSTANTS_ONLY = "spark.sql.legacy.parameterSubstitution.constantsOnly"
# Delta refuses a VACUUM retaining less than the table's deleted-file retention while it is on.
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"

_compile_lock = threading.Lock()
_describer: tuple[Any, Any] | None = None  # (the JVM gateway it lives in, the describer)
_guards: weakref.WeakKeyDictionary[SparkSession, SqlGuard] = weakref.WeakKeyDictionary()


__all__ = ["SqlGuard", "UnsupportedRuntime", "guard", "inspect", "install", "lexing", "parse"]


def _java_source() -> str:
    return resources.files("engine").joinpath("jvm/TreeDescriber.java").read_text(encoding="utf-8")


def _tree_describer(spark: SparkSession) -> Any:
    """The describer in this process's JVM (the job's, or on Spark Connect the parser's),
    compiled on first use (and again after a new JVM)."""
    global _describer
    spark = parser_sessions.parser_of(spark)
    gateway: Any = spark.sparkContext._gateway
    current = _describer
    if current is not None and current[0] is gateway:
        return current[1]
    with _compile_lock:
        if _describer is not None and _describer[0] is gateway:
            return _describer[1]
        jvm: Any = spark._jvm
        compiler = jvm.org.codehaus.janino.SimpleCompiler()
        compiler.setParentClassLoader(jvm.java.lang.Thread.currentThread().getContextClassLoader())
        compiler.cook(_java_source())
        # Once per JVM: py4j caches methods by class name, so a second class of the same name
        # (another compilation) could not be called.
        describer_class = compiler.getClassLoader().loadClass("tessera.guard.TreeDescriber")
        describer = describer_class.getConstructors()[0].newInstance(
            gateway.new_array(jvm.java.lang.Object, 0)
        )
        _describer = (gateway, describer)
        log.info("SQL guard: Spark parse tree describer compiled")
        return describer


def _spark_error(exc: Py4JJavaError) -> BaseException:
    """Spark's own exception (ParseException, …) for a failed JVM call, as ``spark.sql``
    would raise it; the describer's refusal (too many parts) becomes ForbiddenSql."""
    java = exc.java_exception
    message = str(java.getMessage() or "")
    if str(java.getClass().getName()) == "java.lang.IllegalStateException" and message.endswith(
        "parts to check."
    ):
        return ForbiddenSql(f"{message} Split it into smaller statements.")
    return convert_exception(java)


def _parser(spark: SparkSession) -> Any:
    _substitution_off(str(spark.conf.get(SUBSTITUTE, "true")))
    session = _session(spark)
    if is_remote_session(spark):
        _substitution_off(str(session.conf().get(SUBSTITUTE, "true")))
    return session.sessionState().sqlParser()


# A py4j answer longer than ~8 KB waits ~40 ms for a delayed ACK (the JVM writes it in two
# buffers; Nagle holds the second): large results are read in pieces below that. The
# describer writes ASCII, and py4j may double backslashes: 3,900 characters stay under it.
CHUNK = 3_900


def _read(builder: Any) -> str:
    """The text of a JVM StringBuilder, read in chunks that each fit one quick answer."""
    length = int(builder.length())
    if length <= CHUNK:
        return str(builder.toString())
    return "".join(
        str(builder.substring(start, min(start + CHUNK, length)))
        for start in range(0, length, CHUNK)
    )


def _session(spark: SparkSession) -> Any:
    """The JVM session whose parser reads ``spark``'s statements (on Spark Connect: its
    paired parser session)."""
    session: Any = getattr(parser_sessions.parser_of(spark), "_jsparkSession", None)
    if session is None:
        raise UnsupportedRuntime("This worker's Spark session has no parser to check with.")
    return session


def _constants_only(value: str) -> None:
    if value.strip().lower() != "true":
        raise ForbiddenSql(
            "Spark would write the parameters' values into the statement's text before "
            "parsing it, so the statement cannot be checked as Spark would read it; nothing "
            "was run."
        )


def _substitution_off(value: str) -> None:
    if value.strip().lower() != "false":
        raise ForbiddenSql(
            "Spark's variable substitution (${…}) is switched on for this session, so the "
            "statement cannot be checked as Spark would read it; nothing was run."
        )


def inspect(spark: SparkSession, text: str, *, expression: bool = False) -> tuple[str, SparkTree]:
    """Spark's reading of ``text`` in one JVM call: its lexer's class of every character
    and its parse (as a statement, or an expression), described."""
    session = _session(spark)
    if is_remote_session(spark):  # the session that runs the text: substitution off there too
        _substitution_off(str(spark.conf.get(SUBSTITUTE, "true")))
    try:
        described = _tree_describer(spark).inspect(session, text, expression, MAX_TREE_NODES)
    except Py4JJavaError as exc:
        raise _spark_error(exc) from None
    data = json.loads(_read(described))
    _substitution_off(str(data["substitute"]))
    return str(data["lex"]), SparkTree(data["tree"])


def lexing(spark: SparkSession, text: str) -> str:
    """What Spark's lexer makes of each character of ``text`` (S, Q, H or X)."""
    try:
        return _read(_tree_describer(spark).lexClasses(text))
    except Py4JJavaError as exc:
        raise _spark_error(exc) from None


def _zorder_of(spark: SparkSession, text: str) -> list[list[str]]:
    """The ZORDER BY columns of an OPTIMIZE as Spark parses it (name parts each): Delta keeps
    them outside the fields the describer reads."""
    try:
        columns: Any = _parser(spark).parsePlan(text).zOrderBy()
        return [
            [str(attr.nameParts().apply(j)) for j in range(attr.nameParts().size())]
            for attr in (columns.apply(i) for i in range(columns.size()))
        ]
    except Py4JJavaError as exc:
        raise _spark_error(exc) from None


def parse(spark: SparkSession, text: str, *, expression: bool = False) -> SparkTree:
    """Spark's parse of ``text`` (a statement, or an expression), described."""
    parser = _parser(spark)
    try:
        described = _tree_describer(spark).parse(parser, text, expression, MAX_TREE_NODES)
    except Py4JJavaError as exc:
        raise _spark_error(exc) from None
    return SparkTree.from_json(_read(described))


class SqlGuard:
    """What one job may send to Spark: the aliases of its plan's relations and functions."""

    def __init__(
        self,
        spark: SparkSession,
        allowed: Allowed,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self.spark = spark
        self.allowed = allowed
        # Column expressions run inside a table's own projection: built-ins only.
        self.expressions = Allowed()
        self.names = dict(names or {})

    @classmethod
    def for_plan(cls, spark: SparkSession, plan: Plan) -> SqlGuard:
        relations = [r.alias for r in plan.relations if r.alias]
        functions = [f.alias for f in plan.functions if f.alias]
        names: dict[str, str] = {}
        items: list[RelationPlan | FunctionPlan] = [*plan.relations, *plan.functions]
        for item in items:
            identifier = [str(part) for part in item.identifier if part]
            if item.alias and identifier:
                names[item.alias] = quote_path(identifier)
        return cls(spark, Allowed.of(relations, functions), names)

    # --- checks ---------------------------------------------------------------------------

    def check(self, text: str, root: RootKind = "query", allowed: Allowed | None = None) -> None:
        """Refuse ``text`` unless Spark's parse of it holds only what the plan allows."""
        rules = self.allowed if allowed is None else allowed
        try:
            reading = PlannerReading.of(text)
            try:
                lex, tree = inspect(self.spark, text, expression=root == "expression")
            except ForbiddenSql:
                raise
            except Exception:
                # Spark cannot parse it: if the two lexers disagree, that is the better
                # answer (it says where); otherwise Spark's own syntax error stands.
                check_lexing(text, lexing(self.spark, text), reading)
                raise
            check_lexing(text, lex, reading)
            references = check_tree(tree, rules, root)
            check_references(text, references, rules, reading)
        except ForbiddenSql as exc:
            raise self._readable(exc) from None

    def check_function(self, text: str, alias: str, body: str) -> None:
        """``CREATE OR REPLACE TEMPORARY FUNCTION `alias`(…) RETURNS … RETURN body`` must be
        exactly that for Spark, and its body an expression of built-ins and the plan's
        functions (SQL function bodies read no table)."""
        body_rules = Allowed(frozenset(), self.allowed.functions)
        self.check(body, "expression", body_rules)
        try:
            tree = parse(self.spark, text)
        except ForbiddenSql as exc:
            raise self._readable(exc) from None
        node = tree.node(tree.root)
        fields = tree.fields(node) if node is not None else {}
        name = tree.node(fields.get("name"))
        name_fields = tree.fields(name) if name is not None else {}
        expression_text = tree.items(fields.get("exprText"))
        query_text = tree.items(fields.get("queryText"))
        expected = (
            node is not None
            and tree.class_name(node).endswith(".CreateSQLFunctionCommand")
            and name_fields.get("funcName") == alias
            and not tree.items(name_fields.get("database"))
            and not tree.items(name_fields.get("catalog"))
            and fields.get("isTemp") is True
            and fields.get("isTableFunc") is False
            and expression_text == [body]
            and not query_text
        )
        if not expected:
            raise ForbiddenSql(
                "Spark reads the definition of a SQL function differently from how Tessera "
                "wrote it; the function was not registered.",
                details={"checked_by": "spark_parser", "function": self.names.get(alias, alias)},
            )

    def _readable(self, exc: ForbiddenSql) -> ForbiddenSql:
        """The error with the plan's aliases replaced by the objects' names."""
        message = exc.message
        for alias, name in sorted(self.names.items(), key=lambda item: -len(item[0])):
            message = message.replace(f"`{alias}`", name).replace(alias, name)
        if message == exc.message:
            return exc
        return ForbiddenSql(message, details=dict(exc.details))

    # --- checked entry points to Spark --------------------------------------------------------

    def sql(
        self,
        text: str,
        root: RootKind = "query",
        parameters: Mapping[str, Any] | None = None,
    ) -> DataFrame:
        """``spark.sql(text)`` once Spark's parse of it passed the check. ``parameters``
        (a query's ``:name`` values) go to Spark beside the text, bound as literals at
        analysis: Spark's substitution of their SQL text into the statement is switched
        off (checked here), so Spark parses the very text that was checked."""
        if not parameters:
            self.check(text, root)
            return self.spark.sql(text)
        _constants_only(str(self.spark.conf.get(CONSTANTS_ONLY, "false")))
        if is_remote_session(self.spark):
            _constants_only(str(_session(self.spark).conf().get(CONSTANTS_ONLY, "false")))
        rules = Allowed(self.allowed.relations, self.allowed.functions, frozenset(parameters))
        self.check(text, root, rules)
        return self.spark.sql(text, args=dict(parameters))

    def row_change(self, text: str, target: str, shown: str = "") -> DataFrame:
        """``spark.sql(text)`` of a planned MERGE / UPDATE / DELETE, once Spark's parse of it
        is exactly such a statement writing ``target`` (the alias the worker registered over
        the table's directory) and reading only the plan's relations."""
        rules = replace(
            self.allowed,
            relations=self.allowed.relations | {name_key(target)},
            target=target,
        )
        if shown:
            self.names[target] = shown
        self.check(text, "dml", rules)
        return self.spark.sql(text)

    def alter_table(self, text: str, path: str, change: Mapping[str, Any]) -> DataFrame:
        """``spark.sql(text)`` of a planned ALTER TABLE / COMMENT ON TABLE / OPTIMIZE /
        VACUUM, once Spark's parse of it is exactly the planned ``change`` of the Delta table
        at ``path`` (``core.planner.alter_guard``), a CHECK constraint's expression or
        OPTIMIZE's WHERE one of built-ins, and a VACUUM runs with Delta's retention check."""
        try:
            lex, tree = inspect(self.spark, text)
            check_lexing(text, lex, PlannerReading.of(text))
            check_alter_tree(tree, change, path)
        except ForbiddenSql as exc:
            raise self._readable(exc) from None
        op = change.get("op")
        if op == "add_constraint":
            self.check(str(change.get("expression") or ""), "expression", self.expressions)
        if op == "optimize":
            if change.get("where"):
                self.check(str(change["where"]), "expression", self.expressions)
            try:
                check_zorder(_zorder_of(self.spark, text), change)
            except ForbiddenSql as exc:
                raise self._readable(exc) from None
        if op == "vacuum" and str(self.spark.conf.get(RETENTION_CHECK, "true")) != "true":
            raise ForbiddenSql("VACUUM runs with Delta's retention check on; nothing was run.")
        return self.spark.sql(text)

    def select_expr(self, frame: DataFrame, expressions: Sequence[str]) -> DataFrame:
        """``frame.selectExpr(*expressions)`` once each passed the check (built-ins only)."""
        for expression in expressions:
            self.check(expression, "expression", self.expressions)
        return frame.selectExpr(*expressions)


def install(spark: SparkSession, plan: Plan) -> SqlGuard:
    """Give a job's session the guard of its plan."""
    found = SqlGuard.for_plan(spark, plan)
    parser_sessions.mirror_conf(spark, SUBSTITUTE, "false")
    parser_sessions.mirror_conf(spark, CONSTANTS_ONLY, "true")
    _guards[spark] = found
    return found


def guard(spark: SparkSession) -> SqlGuard:
    """The session's guard; a session without a plan may reference nothing registered."""
    found = _guards.get(spark)
    if found is None:
        parser_sessions.mirror_conf(spark, SUBSTITUTE, "false")
        found = SqlGuard(spark, Allowed())
        _guards[spark] = found
    return found
