"""The guard that cannot be bypassed by a lexer difference: Spark's own parse, checked.

The planner reads a statement with sqlglot's tokenizer and parser; Spark reads the text the
worker sends it with its own ANTLR lexer and parser. Wherever the two disagree (where a
comment or a string ends, how quotes nest, what an escape means), text the planner took for
harmless would be code for Spark. So, before Spark runs anything, the worker parses the exact
text with Spark's parser (``sessionState.sqlParser``: parsing only, no analysis), describes
the tree as JSON (``engine/jvm/TreeDescriber.java``) and hands it here.

``check_tree`` walks every node of that tree and refuses, with ``ForbiddenSql``:

- any class that is not on an allow-list (commands, script transforms, ``InsertIntoDir``,
  ``IDENTIFIER(…)`` with a computed name, parameter markers, anything this module does not
  know — new Spark syntax is refused until it is reviewed and listed here);
- a relation that is not one the planner registered (its ``__tessera_rN`` alias) or a CTE in
  scope: no file paths, no other catalog, no relation options;
- a function call that is neither a registered alias (``__tessera_fN``) nor a Spark built-in
  outside ``FORBIDDEN_FUNCTIONS`` (``reflect`` & co.); a table-valued function outside a
  short list.

``check_references`` is the differential half: the number of references to each alias that
Spark's parse holds must equal the number the planner's tokenizer sees in the same text. A
difference means the two read the text differently (one of them took code for a comment or a
string), and the statement is refused even if what Spark would run is harmless.

Pure Python: the tree arrives as JSON text; nothing here imports pyspark or Django.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from core.errors import CoreError
from core.identifiers import name_key, quote_part, quote_path
from core.planner.errors import ForbiddenSql
from core.planner.functions import is_builtin
from core.planner.guard import FORBIDDEN_FUNCTIONS, FORBIDDEN_OPTION_KEYS
from core.planner.tokens import Token, line_col, tokenize
from core.session_properties import SHUFFLE_PARTITIONS_MAX as MAX_PARTITIONS

RootKind: TypeAlias = Literal["query", "explain", "expression"]

_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
_ANALYSIS = "org.apache.spark.sql.catalyst.analysis."
_EXPRESSIONS = "org.apache.spark.sql.catalyst.expressions."

# Plan nodes a query may consist of, as Spark's parser builds them. Relations, CTEs and
# table-valued functions have their own rules below.
PLAN_CLASSES: frozenset[str] = frozenset(
    {
        _LOGICAL + name
        for name in (
            "Aggregate",
            "Deduplicate",
            "Distinct",
            "Except",
            "Expand",
            "Filter",
            "Generate",
            "GlobalLimit",
            "Intersect",
            "Join",
            "LateralJoin",
            "LimitAll",
            "LocalLimit",
            "LocalRelation",
            "Offset",
            "OneRowRelation",
            "Pivot",
            "Project",
            "RebalancePartitions",
            "Repartition",
            "RepartitionByExpression",
            "Sample",
            "Sort",
            "SubqueryAlias",
            "Tail",
            "Union",
            "UnresolvedHint",
            "UnresolvedWith",
            "Unpivot",
            "Window",
            "WithWindowDefinition",
        )
    }
    | {
        _ANALYSIS + name
        for name in (
            "UnresolvedHaving",
            "UnresolvedInlineTable",
            "UnresolvedQualify",
            "UnresolvedRelation",
            "UnresolvedSubqueryColumnAliases",
            "UnresolvedTVFAliases",
            "UnresolvedTableValuedFunction",
        )
    }
    | {_EXPRESSIONS + "PipeOperator"}
    | {
        _LOGICAL + "NearestByJoin",  # JOIN … EXACT|APPROX NEAREST n BY …
        _LOGICAL + "AsOfJoin",  # ASOF JOIN (when Spark's conf enables it)
        _LOGICAL + "UnresolvedBinBy",  # BIN BY (…)
        _ANALYSIS + "UnresolvedEventTimeWatermark",  # t WATERMARK ts DELAY OF … (inert in batch)
    }
)

# Expression classes Spark's parser builds directly (function calls are UnresolvedFunction
# and checked by name). Anything in Catalyst's ``expressions.objects`` (reflection) or a UDF
# class is not here and never will be.
EXPRESSION_CLASSES: frozenset[str] = frozenset(
    {
        _ANALYSIS + name
        for name in (
            "UnresolvedAlias",
            "UnresolvedAttribute",
            "UnresolvedExtractValue",
            "UnresolvedFunction",
            "MultiAlias",  # generator(…) AS (a, b)
            "UnresolvedGenerator",
            "UnresolvedOrdinal",
            "UnresolvedPipeAggregateOrdinal",
            "UnresolvedRegex",
            "UnresolvedStar",
            "UnresolvedStarExceptOrReplace",
        )
    }
    | {
        _EXPRESSIONS + name
        for name in (
            "Add",
            "Alias",
            "And",
            "ArrayFilter",
            "Ascending$",
            "BitwiseAnd",
            "BitwiseNot",
            "BitwiseOr",
            "BitwiseXor",
            "AttributeReference",  # the columns of VALUES folded into a LocalRelation
            "CaseWhen",
            "Cast",
            "Coalesce",
            "Collate",
            "Concat",
            "CreateNamedStruct",
            "CurrentDate",
            "CurrentTimestamp",
            "CurrentRow$",
            "CurrentUser",
            "Cube",
            "Divide",
            "EqualNullSafe",
            "EqualTo",
            "Exists",
            "GreaterThan",
            "GreaterThanOrEqual",
            "GroupingSets",
            "ILike",
            "In",
            "InSubquery",
            "IntegralDivide",
            "IsNotNull",
            "IsNull",
            "LambdaFunction",
            "LateralSubquery",
            "LessThan",
            "LessThanOrEqual",
            "Like",
            "LikeAll",
            "LikeAny",
            "ListQuery",
            "Literal",
            "Multiply",
            "NamePlaceholder$",  # struct(t.*)
            "NamedArgumentExpression",
            "Not",
            "NotLikeAll",
            "NotLikeAny",
            "Or",
            "Overlay",
            "PipeExpression",
            "Remainder",
            "RLike",
            "Rollup",
            "RowFrame$",
            "RangeFrame$",
            "ScalarSubquery",
            "SortOrder",
            "SpecifiedWindowFrame",
            "StringLocate",
            "StringTrim",
            "StringTrimBoth",
            "StringTrimLeft",
            "StringTrimRight",
            "Substring",
            "Subtract",
            "UnaryMinus",
            "UnaryPositive",
            "UnboundedFollowing$",
            "UnboundedPreceding$",
            "UnresolvedCollation",
            "UnresolvedNamedLambdaVariable",
            "UnresolvedWindowExpression",
            "UnspecifiedFrame$",
            "WindowExpression",
            "WindowSpecDefinition",
        )
    }
    # |> SELECT with an aggregate: the pipe syntax builds these directly.
    | {_EXPRESSIONS + "aggregate.AggregateExpression", _EXPRESSIONS + "aggregate.AnyValue"}
    # Built by the parser from their own syntax (found in Spark 4.3's AstBuilder bytecode):
    # <<, >>, >>>; j:a.b; DATEADD/TIMESTAMPADD/DATEDIFF(unit, …); first(x)/last(x);
    # ILIKE ANY/ALL; CURRENT_PATH/CURRENT_TIME; UNNEST; JSON_TABLE; f(TABLE(t)).
    | {
        _EXPRESSIONS + name
        for name in (
            "ShiftLeft",
            "ShiftRight",
            "ShiftRightUnsigned",
            "SemiStructuredExtract",
            "TimestampAdd",
            "TimestampDiff",
            "aggregate.First",
            "aggregate.Last",
            "Lower",
            "CurrentPath",
            "CurrentTime",
            "Unnest",
            "JsonTable",
            "FunctionTableSubqueryArgumentExpression",
        )
    }
)

# Anonymous subclasses (IS [NOT] UNKNOWN: IsNull/IsNotNull with their own SQL text): the
# Scala compiler numbers them ($$anon$1, $$anon$2…) per source file, so match the prefix.
ANONYMOUS_EXPRESSIONS: tuple[str, ...] = (
    _EXPRESSIONS + "IsUnknown$$anon$",
    _EXPRESSIONS + "IsNotUnknown$$anon$",
)

# Other case classes that only carry data (names, ids, frame bounds…).
PRODUCT_CLASSES: frozenset[str] = frozenset(
    {
        "org.apache.spark.sql.catalyst.AliasIdentifier",
        "org.apache.spark.sql.catalyst.FunctionIdentifier",
        _EXPRESSIONS + "ExprId",
        _EXPRESSIONS + "NumericEvalContext",
        _EXPRESSIONS + "WindowSpecReference",
        _EXPRESSIONS + "JsonTableColumn",
        _LOGICAL + "BinByOutputAliases",
        "org.apache.spark.sql.catalyst.plans.NaturalJoin",
        "org.apache.spark.sql.catalyst.plans.UsingJoin",
        _LOGICAL + "JoinHint",
        "scala.Tuple2",
        "scala.Tuple3",
    }
)

# Values of literals and the like that the describer cannot take apart (and need not).
OPAQUE_CLASSES: frozenset[str] = frozenset(
    {
        "java.util.UUID",
        "org.apache.spark.sql.types.Decimal",
        "org.apache.spark.sql.types.Metadata",
        "scala.Enumeration$Val",  # evaluation modes (ANSI, TRY, LEGACY)
        "org.apache.spark.unsafe.types.CalendarInterval",
        "org.apache.spark.sql.catalyst.expressions.GenericInternalRow",
        "org.apache.spark.sql.catalyst.expressions.UnsafeRow",
        "[B",  # binary literals (X'…')
    }
)

# Functions that read a file or URL named in their options, with the position of their
# options argument: those options must be a literal map without the keys that do.
OPTION_MAP_FUNCTIONS: dict[str, int] = {"from_xml": 2, "schema_of_xml": 1, "to_xml": 1}
# Hints whose integer parameters are partition counts.
PARTITIONING_HINTS = frozenset({"REPARTITION", "REPARTITION_BY_RANGE", "REBALANCE", "COALESCE"})

# Table-valued functions a query may call: Spark's, but python_worker_logs (it reads the
# logs of Spark's Python workers, shared by every user). tests/engine/spark pins Spark's list.
TABLE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "collations",
        "range",
        "sql_keywords",
        "explode",
        "explode_outer",
        "inline",
        "inline_outer",
        "json_tuple",
        "posexplode",
        "posexplode_outer",
        "stack",
        "variant_explode",
        "variant_explode_outer",
    }
)

# Why a known construct is refused, in the words of the SQL reference (docs/statements.md).
_REASONS: dict[str, str] = {
    "ScriptTransformation": "Script transforms (TRANSFORM … USING '…') are not allowed: they "
    "run external programs on the cluster.",
    "InsertIntoDir": "INSERT OVERWRITE DIRECTORY is not allowed: writing files by path "
    "bypasses the catalog.",
    "InsertIntoStatement": "INSERT inside a query is not allowed: Tessera runs writes itself.",
    "PlanWithUnresolvedIdentifier": "IDENTIFIER(…) is not allowed: names built from strings "
    "cannot be checked before the statement runs.",
    "ExpressionWithUnresolvedIdentifier": "IDENTIFIER(…) is not allowed: names built from "
    "strings cannot be checked before the statement runs.",
    "NamedParameter": "Parameter markers (:name) take values only in queries sent with "
    '"parameters"; this statement cannot have them.',
    "PosParameter": "Parameter markers (?) are not supported.",
    "UnresolvedWithCTERelations": "This form of WITH is not supported.",
}

_SPARK_SAYS = "Spark reads this statement"
NAMED_PARAMETER = "org.apache.spark.sql.catalyst.analysis.NamedParameter"
_READ_DIFFERENTLY = (
    "Tessera and Spark read this statement differently ({what}); rewrite it without "
    "ambiguous comments, quotes or escapes."
)


@dataclass(frozen=True)
class Allowed:
    """What a text sent to Spark may reference: the aliases of the relations and functions
    the planner resolved and registered (lower case), and whether built-ins may be called."""

    relations: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()
    # Named parameter markers (:name) whose values are sent beside the text, as spelled.
    parameters: frozenset[str] = frozenset()

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


Ref: TypeAlias = Any  # a node's number, a string, True, False or None

_KINDS = {
    "p": "plan",
    "e": "expr",
    "t": "tree",
    "o": "product",
    "s": "seq",
    "m": "map",
    "n": "num",
    "y": "type",
    "j": "object",
    "u": "enum",
    "q": "opaque",
}
_CLASSED = frozenset({"p", "e", "t", "o", "j", "u", "q"})


class SparkTree:
    """A parse tree as ``TreeDescriber`` describes it: flat, nodes by number, class and field
    names interned (see engine/jvm/TreeDescriber.java for the format)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        nodes, classes, fields = data.get("nodes"), data.get("classes"), data.get("fields")
        if not isinstance(nodes, list) or "root" not in data:
            raise ValueError("not a described Spark tree")
        self.root: Ref = data["root"]
        self.nodes: list[list[Any]] = nodes
        self.classes: list[str] = list(classes or [])
        self.field_names: list[str] = list(fields or [])

    @classmethod
    def from_json(cls, text: str) -> SparkTree:
        return cls(json.loads(text))

    def node(self, ref: Ref) -> list[Any] | None:
        """The node a ref points at (None for a scalar: bool is not a ref)."""
        return self.nodes[ref] if type(ref) is int else None

    def kind(self, node: Sequence[Any]) -> str:
        return _KINDS.get(node[0], str(node[0]))

    def class_name(self, node: Sequence[Any]) -> str:
        return self.classes[node[1]] if node[0] in _CLASSED else ""

    def fields(self, node: Sequence[Any]) -> dict[str, Ref]:
        """A case class's fields by name (empty for other nodes)."""
        if node[0] not in ("p", "e", "t", "o"):
            return {}
        names = self.field_names
        return {names[node[i]]: node[i + 1] for i in range(2, len(node) - 1, 2)}

    def items(self, ref: Ref) -> list[Ref]:
        """The items of a sequence (or Option) ref; a scalar or None is no items."""
        node = self.node(ref)
        if node is None or node[0] != "s":
            return []
        return list(node[1:])

    def strings(self, ref: Ref) -> list[str] | None:
        """A sequence of strings (name parts), or None if it is anything else."""
        node = self.node(ref)
        if node is None or node[0] != "s" or not all(isinstance(i, str) for i in node[1:]):
            return None
        return list(node[1:])

    def children(self, node: Sequence[Any]) -> Sequence[Ref]:
        """Every ref a node holds (field values, items, map keys and values)."""
        tag = node[0]
        if tag in ("p", "e", "t", "o"):
            return node[3::2]
        if tag in ("s", "m"):
            return node[1:]
        return ()


def _short(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].rstrip("$")


def _refuse_class(class_name: str, kind: str) -> ForbiddenSql:
    short = _short(class_name)
    reason = _REASONS.get(short)
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
        self._walk(start)
        return self.references

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
        if class_name not in EXPRESSION_CLASSES and not class_name.startswith(
            ANONYMOUS_EXPRESSIONS
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


# What a character is to a lexer (TreeDescriber.lexClasses builds Spark's string).
_CLASS_NAMES = {"S": "a string", "Q": "a quoted name", "H": "a comment", "X": "code"}
_WHITESPACE = re.compile(r"\s+")


def _blank_whitespace(text: str, classes: bytearray) -> bytes:
    """Whitespace inside code means nothing (a hint's spaces are one token to sqlglot, gaps
    between tokens to Spark): only strings, quoted names and comments keep their class."""
    for match in _WHITESPACE.finditer(text):
        begin, end = match.span()
        classes[begin:end] = classes[begin:end].replace(b"X", b"H")
    return bytes(classes)


@dataclass(frozen=True)
class PlannerReading:
    """The planner's tokens of one text, read once for both differential checks (or the
    reason the planner's tokenizer cannot read it)."""

    text: str
    tokens: tuple[Token, ...] | None
    error: str = ""

    @classmethod
    def of(cls, text: str) -> PlannerReading:
        try:
            return cls(text, tuple(tokenize(text)))
        except CoreError as exc:
            return cls(text, None, exc.message)


def lexical_classes(text: str, reading: PlannerReading | None = None) -> bytes:
    """What the planner's tokenizer makes of each character of ``text``: S (in a string
    literal, quotes included), Q (a backquoted name), H (comment or whitespace) or X (code).
    A string's prefix letter (X'…', R'…') counts as code. ForbiddenSql if the planner's
    tokenizer cannot read the text at all."""
    reading = reading or PlannerReading.of(text)
    if reading.tokens is None:
        raise ForbiddenSql(
            f"Tessera cannot read the statement Spark would run: {reading.error}",
            details={"checked_by": "spark_lexer"},
        )
    classes = bytearray(b"H" * len(text))
    _mark(text, 0, reading.tokens, classes)
    return _blank_whitespace(text, classes)


def _mark(text: str, begin: int, tokens: Sequence[Token], classes: bytearray) -> None:
    for token in tokens:
        start, stop = begin + token.start, begin + token.end
        mark = _TOKEN_CLASSES.get(token.kind, b"X")
        classes[start:stop] = mark * (stop - start)
        if token.kind == "string" and stop - start > 1 and text[start].isalpha():
            classes[start] = ord("X")
        elif token.text.startswith("/*+") and token.text.endswith("*/") and stop - start >= 5:
            # sqlglot keeps a hint as one token; Spark lexes its inside like any SQL. Read
            # the inside too (what cannot be read stays code, and Spark's reading decides).
            inside = bytearray(b"H" * (stop - start - 5))
            try:
                _mark(text[start + 3 : stop - 2], 0, tokenize(text[start + 3 : stop - 2]), inside)
            except CoreError:
                inside = bytearray(b"X" * (stop - start - 5))
            classes[start + 3 : stop - 2] = inside


_TOKEN_CLASSES = {"string": b"S", "ident": b"Q"}


def check_lexing(text: str, spark_classes: str, reading: PlannerReading | None = None) -> None:
    """The lexical differential: every character must be code, string, quoted name or
    comment to Spark's lexer exactly as it is to the planner's. Raises ForbiddenSql."""
    ours = lexical_classes(text, reading)
    theirs = _blank_whitespace(text, bytearray(spark_classes.encode("ascii", "replace")))
    if ours == theirs:
        return
    if len(ours) != len(theirs):
        raise ForbiddenSql(
            _READ_DIFFERENTLY.format(what="Spark counts the characters differently"),
            details={"checked_by": "spark_lexer"},
        )
    index = next(i for i in range(len(ours)) if ours[i] != theirs[i])
    line, column = line_col(text, index)
    planner = _CLASS_NAMES.get(chr(ours[index]), "?")
    spark = _CLASS_NAMES.get(chr(theirs[index]), "?")
    raise ForbiddenSql(
        _READ_DIFFERENTLY.format(
            what=f"at line {line}, column {column} Tessera reads {planner}, Spark reads {spark}"
        ),
        details={"checked_by": "spark_lexer", "line": line, "column": column},
    )


def token_references(
    text: str, allowed: Allowed, reading: PlannerReading | None = None
) -> References:
    """How often the planner's tokenizer sees each registered alias as a name in ``text``."""
    reading = reading or PlannerReading.of(text)
    found = References()
    for token in reading.tokens or ():
        if not token.is_name:
            continue
        key = name_key(token.text)
        if key in allowed.relations:
            found.relations[key] += 1
        elif key in allowed.functions:
            found.functions[key] += 1
    return found


def check_references(
    text: str, spark: References, allowed: Allowed, reading: PlannerReading | None = None
) -> None:
    """The differential check: Spark's parse and the planner's tokens must reference the
    registered aliases equally often."""
    planner = token_references(text, allowed, reading)
    for what, ours, theirs in (
        ("tables", planner.relations, spark.relations),
        ("functions", planner.functions, spark.functions),
    ):
        if ours != theirs:
            names = sorted(set(ours) | set(theirs))
            shown = ", ".join(
                f"{quote_part(name)}: planner {ours[name]}, Spark {theirs[name]}"
                for name in names
                if ours[name] != theirs[name]
            )
            raise ForbiddenSql(
                _READ_DIFFERENTLY.format(what=f"references to {what}: {shown}"),
                details={"checked_by": "spark_parser", "differential": what},
            )
