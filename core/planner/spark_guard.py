"""The guard that cannot be bypassed by a lexer difference: Spark's own parse, checked.

The planner reads a statement with sqlglot's tokenizer and parser; Spark reads the text the
worker sends it with its own ANTLR lexer and parser. Wherever the two disagree (where a
comment or a string ends, how quotes nest, what an escape means), text the planner took for
harmless would be code for Spark. So, before Spark runs anything, the worker parses the exact
text with Spark's parser (``sessionState.sqlParser``: parsing only, no analysis), describes
the tree as JSON (``engine/jvm/TreeDescriber.java``) and hands it here.

``check_tree`` walks every node of that tree and refuses, with ``ForbiddenSql``:

- any class that is not on an allow-list (``core.planner.spark_allowlist``: commands,
  script transforms, ``InsertIntoDir``, ``IDENTIFIER(…)`` with a computed name, parameter
  markers, anything not listed — new Spark syntax is refused until it is reviewed and
  listed there);
- a relation that is not one the planner registered (its ``__tessera_rN`` alias) or a CTE in
  scope: no file paths, no other catalog, no relation options;
- a function call that is neither a registered alias (``__tessera_fN``) nor a Spark built-in
  outside ``FORBIDDEN_FUNCTIONS`` (``reflect`` & co.); a table-valued function outside a
  short list.

The tree itself is ``core.planner.spark_tree.SparkTree``. The differential half
(``check_lexing``, ``check_references``: Spark and the planner must read the text alike) is
``core.planner.spark_differential``.

Pure Python: the tree arrives as JSON text; nothing here imports pyspark or Django.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from core.identifiers import name_key, quote_path
from core.planner.errors import ForbiddenSql
from core.planner.functions import is_builtin
from core.planner.guard import FORBIDDEN_FUNCTIONS, FORBIDDEN_OPTION_KEYS
from core.planner.spark_allowlist import (
    ANONYMOUS_EXPRESSIONS,
    DML_EXPRESSION_CLASSES,
    DML_PLAN_CLASSES,
    EXPRESSION_CLASSES,
    OPAQUE_CLASSES,
    OPTION_MAP_FUNCTIONS,
    PARTITIONING_HINTS,
    PLAN_CLASSES,
    PRODUCT_CLASSES,
    REASONS,
    TABLE_FUNCTIONS,
)
from core.planner.spark_tree import Ref, SparkTree
from core.session_properties import SHUFFLE_PARTITIONS_MAX as MAX_PARTITIONS

RootKind: TypeAlias = Literal["query", "explain", "expression", "dml"]

_SPARK_SAYS = "Spark reads this statement"
NAMED_PARAMETER = "org.apache.spark.sql.catalyst.analysis.NamedParameter"


@dataclass(frozen=True)
class Allowed:
    """What a text sent to Spark may reference: the aliases of the relations and functions
    the planner resolved and registered (lower case), and whether built-ins may be called."""

    relations: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()
    # Named parameter markers (:name) whose values are sent beside the text, as spelled.
    parameters: frozenset[str] = frozenset()
    # A row-level change's target (root ``dml``): the one relation it may write.
    target: str | None = None

    @classmethod
    def of(
        cls,
        relations: Sequence[str] = (),
        functions: Sequence[str] = (),
        parameters: Sequence[str] = (),
    ) -> Allowed:
        return cls(
            frozenset(name_key(r) for r in relations),
            frozenset(name_key(f) for f in functions),
            frozenset(parameters),
        )


@dataclass
class References:
    """How often Spark's parse references each registered alias."""

    relations: Counter[str] = field(default_factory=Counter)
    functions: Counter[str] = field(default_factory=Counter)
    parameters: set[str] = field(default_factory=set)


def _short(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].rstrip("$")


def _refuse_class(class_name: str, kind: str) -> ForbiddenSql:
    short = _short(class_name)
    reason = REASONS.get(short)
    if reason is None:
        if "execution.command" in class_name or short.endswith(("Command", "Statement")):
            reason = (
                f"{_SPARK_SAYS} as a command ({short}): only queries run on Spark, and "
                "Tessera runs the statements of its SQL reference itself."
            )
        else:
            what = {"plan": "plan node", "expr": "expression"}.get(kind, "construct")
            reason = (
                f"{_SPARK_SAYS} with a {what} Tessera does not allow ({short}): only the "
                "query syntax Tessera has reviewed can run."
            )
    return ForbiddenSql(reason, details={"checked_by": "spark_parser", "construct": short})


class _Walk:
    def __init__(self, tree: SparkTree, allowed: Allowed) -> None:
        self.tree = tree
        self.allowed = allowed
        self.references = References()
        self.dml = False  # inside a planned row-level change: its actions are allowed

    def run(self, root: Ref, root_kind: RootKind) -> References:
        node = self.tree.node(root)
        if node is None:
            raise ForbiddenSql(f"{_SPARK_SAYS} as nothing Tessera can run.")
        kind, class_name = self.tree.kind(node), self.tree.class_name(node)
        start: Ref = root
        if root_kind == "explain":
            if class_name != "org.apache.spark.sql.execution.command.ExplainCommand":
                raise _refuse_class(class_name, str(kind))
            fields = self.tree.fields(node)
            start = fields.get("logicalPlan")
            inner = self.tree.node(start)
            if inner is None or self.tree.kind(inner) != "plan":
                raise ForbiddenSql("EXPLAIN can only explain queries.")
        elif root_kind == "query" and kind != "plan":
            raise ForbiddenSql(f"{_SPARK_SAYS} as something other than a query.")
        elif root_kind == "expression" and kind != "expr":
            raise ForbiddenSql(f"{_SPARK_SAYS} as something other than an expression.")
        elif root_kind == "dml":
            for ref in self._row_change(node, class_name):
                self._walk(ref)
            return self.references
        self._walk(start)
        return self.references

    def _row_change(self, node: Sequence[Any], class_name: str) -> list[Ref]:
        """MERGE / UPDATE / DELETE: exactly the planned statement's kind, writing exactly the
        planned target (its alias, optionally aliased again); every other part is checked
        as a query's, with the merge actions and assignments allowed."""
        target_field = DML_PLAN_CLASSES.get(class_name)
        if target_field is None or not self.allowed.target:
            raise ForbiddenSql(
                f"{_SPARK_SAYS} as something other than the row-level change that was "
                "planned; nothing was run.",
                details={"checked_by": "spark_parser", "construct": _short(class_name)},
            )
        fields = self.tree.fields(node)
        merge = _short(class_name) == "MergeIntoTable"
        if merge and fields.get("withSchemaEvolution") is not False:
            raise ForbiddenSql(
                "MERGE WITH SCHEMA EVOLUTION is not supported: a MERGE changes rows, not the "
                "table's columns.",
                details={"checked_by": "spark_parser", "construct": "MergeIntoTable"},
            )
        self._target(fields.get(target_field))
        self.dml = True
        return [ref for name, ref in fields.items() if name != target_field]

    def _target(self, ref: Ref) -> None:
        """``UnresolvedRelation([target])`` (Spark adds the write privileges it requires as
        the relation's options), possibly under a ``SubqueryAlias``."""
        node = self.tree.node(ref)
        if node is not None and _short(self.tree.class_name(node)) == "SubqueryAlias":
            node = self.tree.node(self.tree.fields(node).get("child"))
        fields = self.tree.fields(node) if node is not None else {}
        parts = self.tree.strings(fields.get("multipartIdentifier")) if node is not None else None
        target = self.allowed.target or ""
        if (
            node is None
            or _short(self.tree.class_name(node)) != "UnresolvedRelation"
            or parts is None
            or [name_key(p) for p in parts] != [name_key(target)]
            or fields.get("isStreaming") is not False
        ):
            shown = quote_path(parts) if parts else "another object"
            raise ForbiddenSql(
                f"{_SPARK_SAYS} as changing {shown}, which is not the table that was planned; "
                "nothing was run.",
                details={"checked_by": "spark_parser", "table": parts or []},
            )
        self.references.relations[name_key(target)] += 1

    def _walk(self, start: Ref) -> None:
        # Explicit stack: parse trees of long expressions are deep (a + b + c … is a chain).
        stack: list[tuple[Ref, frozenset[str]]] = [(start, frozenset())]
        while stack:
            ref, ctes = stack.pop()
            node = self.tree.node(ref)
            if node is None:
                continue  # a string, a boolean, null
            kind = self.tree.kind(node)
            class_name = self.tree.class_name(node)
            if kind == "plan":
                stack.extend(self._plan(node, class_name, ctes))
            elif kind == "expr":
                self._expression(node, class_name)
                stack.extend((child, ctes) for child in self.tree.children(node))
            elif kind == "product":
                if class_name not in PRODUCT_CLASSES:
                    raise _refuse_class(class_name, "product")
                stack.extend((child, ctes) for child in self.tree.children(node))
            elif kind in ("seq", "map"):
                stack.extend((child, ctes) for child in self.tree.children(node))
            elif kind == "opaque":
                if class_name not in OPAQUE_CLASSES:
                    raise _refuse_class(class_name, "value")
            elif kind in ("num", "type", "object", "enum"):
                continue  # constants: numbers, data types, Scala objects, Java enums
            else:
                raise _refuse_class(class_name or str(kind), "construct")

    def _plan(
        self, node: Sequence[Any], class_name: str, ctes: frozenset[str]
    ) -> list[tuple[Ref, frozenset[str]]]:
        if class_name not in PLAN_CLASSES:
            raise _refuse_class(class_name, "plan")
        fields = self.tree.fields(node)
        short = _short(class_name)
        if short == "UnresolvedRelation":
            self._relation(fields, ctes)
            return []
        if short == "UnresolvedWith":
            return self._with(fields, ctes)
        if short == "UnresolvedTableValuedFunction":
            self._table_function(fields)
        elif short == "UnresolvedHint":
            self._hint(fields)
        return [(child, ctes) for child in self.tree.children(node)]

    def _relation(self, fields: Mapping[str, Ref], ctes: frozenset[str]) -> None:
        parts = self.tree.strings(fields.get("multipartIdentifier"))
        if parts is None:
            raise ForbiddenSql(f"{_SPARK_SAYS} with a table name Tessera cannot check.")
        options = self.tree.node(fields.get("options"))
        if options is not None and len(options) > 1:
            raise ForbiddenSql(
                f"Table options in a query (… WITH ('key' = 'value')) are not allowed: "
                f"{quote_path(parts)} is read as the catalog declares it.",
                details={"checked_by": "spark_parser", "table": parts},
            )
        if fields.get("isStreaming") is True:
            raise ForbiddenSql("Streaming reads (STREAM …) are not supported.")
        key = name_key(parts[0]) if len(parts) == 1 else None
        if key is not None and key in ctes:
            return
        if key is not None and key in self.allowed.relations:
            self.references.relations[key] += 1
            return
        raise ForbiddenSql(
            f"{_SPARK_SAYS} as reading {quote_path(parts)}, which is not a table or view the "
            "planner resolved: every table must come from the Tessera catalog.",
            details={"checked_by": "spark_parser", "table": parts},
        )

    def _with(
        self, fields: Mapping[str, Ref], ctes: frozenset[str]
    ) -> list[tuple[Ref, frozenset[str]]]:
        """A CTE sees the CTEs before it (and itself when recursion is allowed); the query
        after WITH sees them all."""
        recursive = fields.get("allowRecursion") is True
        pending: list[tuple[Ref, frozenset[str]]] = []
        scope = set(ctes)
        for definition in self.tree.items(fields.get("cteRelations")):
            entry = self.tree.node(definition)
            if entry is None or self.tree.class_name(entry) not in ("scala.Tuple2", "scala.Tuple3"):
                raise ForbiddenSql(f"{_SPARK_SAYS} with a WITH clause Tessera cannot check.")
            parts = list(self.tree.children(entry))
            name = parts[0]
            if not isinstance(name, str):
                raise ForbiddenSql(f"{_SPARK_SAYS} with a WITH clause Tessera cannot check.")
            if recursive:
                scope.add(name_key(name))
            pending.extend((value, frozenset(scope)) for value in parts[1:])
            scope.add(name_key(name))
        pending.append((fields.get("child"), frozenset(scope)))
        return pending

    def _table_function(self, fields: Mapping[str, Ref]) -> None:
        parts = self.tree.strings(fields.get("name"))
        if parts is None or len(parts) != 1 or name_key(parts[0]) not in TABLE_FUNCTIONS:
            shown = quote_path(parts) if parts else "?"
            raise ForbiddenSql(
                f"The table-valued function {shown} is not allowed: Tessera allows "
                f"{', '.join(sorted(TABLE_FUNCTIONS))}.",
                details={"checked_by": "spark_parser", "function": parts},
            )
        if name_key(parts[0]) == "range":
            # range(start, end, step, numPartitions): the fourth, positional or named.
            for index, argument in enumerate(self.tree.items(fields.get("functionArgs"))):
                node = self.tree.node(argument)
                named = node is not None and self.tree.class_name(node).endswith(
                    ".NamedArgumentExpression"
                )
                if named or index >= 3:
                    value = self.tree.fields(node).get("value") if named and node else argument
                    self._partitions("range(…)", value)

    def _expression(self, node: Sequence[Any], class_name: str) -> None:
        if class_name == NAMED_PARAMETER and self.allowed.parameters:
            self._parameter(self.tree.fields(node))
            return
        if (
            class_name not in EXPRESSION_CLASSES
            and not class_name.startswith(ANONYMOUS_EXPRESSIONS)
            and not (self.dml and class_name in DML_EXPRESSION_CLASSES)
        ):
            raise _refuse_class(class_name, "expr")
        short = _short(class_name)
        if short == "UnresolvedFunction":
            self._function(self.tree.fields(node))
        elif short == "UnresolvedGenerator":
            self._generator(self.tree.fields(node))

    def _parameter(self, fields: Mapping[str, Ref]) -> None:
        name = fields.get("name")
        if not isinstance(name, str) or name not in self.allowed.parameters:
            raise ForbiddenSql(
                f"{_SPARK_SAYS} with a parameter marker :{name} that has no value; nothing "
                "was run.",
                details={"checked_by": "spark_parser", "parameter": str(name)},
            )
        self.references.parameters.add(name)

    def _function(self, fields: Mapping[str, Ref]) -> None:
        parts = self.tree.strings(fields.get("nameParts"))
        if parts is None:
            raise ForbiddenSql(f"{_SPARK_SAYS} with a function name Tessera cannot check.")
        if fields.get("isInternal") is True:
            raise ForbiddenSql(
                f"Calling Spark's internal function {quote_path(parts)} is not allowed."
            )
        self._function_name(parts)
        key = name_key(parts[0])
        if key in OPTION_MAP_FUNCTIONS:
            arguments = self.tree.items(fields.get("arguments"))
            position = OPTION_MAP_FUNCTIONS[key]
            if len(arguments) > position:
                self._literal_options(key, arguments[position])

    def _generator(self, fields: Mapping[str, Ref]) -> None:
        """``LATERAL VIEW gen(…)``: the generator's name follows the rules of any call."""
        name = self.tree.node(fields.get("name"))
        name_fields = self.tree.fields(name) if name is not None else {}
        function = name_fields.get("funcName")
        qualified = self.tree.items(name_fields.get("database")) or self.tree.items(
            name_fields.get("catalog")
        )
        if not isinstance(function, str) or qualified:
            raise ForbiddenSql(f"{_SPARK_SAYS} with a generator Tessera cannot check.")
        self._function_name([function])

    def _function_name(self, parts: Sequence[str]) -> None:
        """A call's name: one of the plan's functions, or an allowed Spark built-in."""
        if len(parts) == 1:
            key = name_key(parts[0])
            if key in self.allowed.functions:
                self.references.functions[key] += 1
                return
            reason = FORBIDDEN_FUNCTIONS.get(key)
            if reason is not None:
                raise ForbiddenSql(
                    f"Calling {key}() is not allowed: {reason}.",
                    details={"checked_by": "spark_parser", "function": list(parts)},
                )
            if is_builtin(key):
                return
        raise ForbiddenSql(
            f"{_SPARK_SAYS} as calling {quote_path(parts)}, which is neither a Spark built-in "
            "Tessera allows nor a function the planner resolved.",
            details={"checked_by": "spark_parser", "function": list(parts)},
        )

    def _literal_options(self, function: str, ref: Ref) -> None:
        """The options of a function that can read files by an option: a literal
        ``map('key', 'value', …)``, without the keys that read files or URLs."""
        node = self.tree.node(ref)
        fields = self.tree.fields(node) if node is not None else {}
        parts = self.tree.strings(fields.get("nameParts")) if node is not None else None
        entries = self.tree.items(fields.get("arguments"))
        keys = [self._string_literal(entry) for entry in entries[0::2]]
        if (
            node is None
            or not self.tree.class_name(node).endswith(".UnresolvedFunction")
            or parts is None
            or [name_key(p) for p in parts] != ["map"]
            or any(key is None for key in keys)
        ):
            raise ForbiddenSql(
                f"The options of {function}() must be written as map('key', 'value', …) with "
                "literal keys, so that Tessera can check them.",
                details={"checked_by": "spark_parser", "function": [function]},
            )
        for key in keys:
            reason = FORBIDDEN_OPTION_KEYS.get(name_key(key or ""))
            if reason is not None:
                raise ForbiddenSql(
                    f"The option '{key}' of {function}() is not allowed: {reason}.",
                    details={"checked_by": "spark_parser", "function": [function]},
                )

    def _string_literal(self, ref: Ref) -> str | None:
        node = self.tree.node(ref)
        if node is None or not self.tree.class_name(node).endswith(".Literal"):
            return None
        value = self.tree.fields(node).get("value")
        return value if isinstance(value, str) else None

    def _integer_literal(self, ref: Ref) -> int | None:
        node = self.tree.node(ref)
        if node is None or not self.tree.class_name(node).endswith(".Literal"):
            return None
        value = self.tree.node(self.tree.fields(node).get("value"))
        if value is None or self.tree.kind(value) != "num":
            return None
        try:
            return int(str(value[1]))
        except ValueError:
            return None

    def _partitions(self, what: str, ref: Ref) -> None:
        """A partition count written in the query: a literal within the server's range
        (Spark allocates per partition up front; a huge count exhausts the shared JVM)."""
        count = self._integer_literal(ref)
        if count is not None and not 1 <= count <= MAX_PARTITIONS:
            raise ForbiddenSql(
                f"{what} asks for {count} partitions; at most {MAX_PARTITIONS} are allowed.",
                details={"checked_by": "spark_parser", "partitions": count},
            )
        if count is None and what.startswith("range"):
            raise ForbiddenSql(
                f"{what} must give its number of partitions as a whole number.",
                details={"checked_by": "spark_parser"},
            )

    def _hint(self, fields: Mapping[str, Ref]) -> None:
        name = fields.get("name")
        if isinstance(name, str) and name.upper() in PARTITIONING_HINTS:
            for parameter in self.tree.items(fields.get("parameters")):
                if self._integer_literal(parameter) is not None:
                    self._partitions(f"The hint {name.upper()}", parameter)


def check_tree(tree: SparkTree, allowed: Allowed, root: RootKind = "query") -> References:
    """Refuse (``ForbiddenSql``) anything in Spark's parse the planner did not allow; returns
    the references to registered aliases, for ``check_references``. Every parameter whose
    value is sent must be a marker Spark reads, and every marker Spark reads a parameter."""
    references = _Walk(tree, allowed).run(tree.root, root)
    missing = sorted(allowed.parameters - references.parameters)
    if missing:
        raise ForbiddenSql(
            f"{_SPARK_SAYS} without the parameter marker :{missing[0]} that Tessera found in "
            "it; rewrite the statement so that the marker stands where a value belongs.",
            details={"checked_by": "spark_parser", "parameter": missing[0]},
        )
    return references
