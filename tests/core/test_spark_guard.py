"""core.planner.spark_guard without Spark: trees as TreeDescriber writes them, by hand.

The real parser and lexer are in tests/engine/spark/test_spark_guard.py and, end to end on a
worker, in tests/security/test_spark_parse_guard.py. Here: the walk's rules (CTE scope,
relations, functions, classes), the reference counts and the lexical comparison.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.planner.errors import ForbiddenSql
from core.planner.spark_differential import check_lexing, check_references, lexical_classes
from core.planner.spark_guard import Allowed, check_tree
from core.planner.spark_tree import SparkTree

LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
ANALYSIS = "org.apache.spark.sql.catalyst.analysis."


class Tree:
    """Builds a described tree node by node, in TreeDescriber.java's compact format."""

    def __init__(self) -> None:
        self.nodes: list[list[Any]] = []
        self.classes: list[str] = []
        self.fields: list[str] = []

    def _intern(self, names: list[str], name: str) -> int:
        if name not in names:
            names.append(name)
        return names.index(name)

    def add(self, node: list[Any]) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def seq(self, *items: Any) -> int:
        return self.add(["s", *items])

    def classed(self, tag: str, name: str, **fields: Any) -> int:
        node: list[Any] = [tag, self._intern(self.classes, name)]
        for field, value in fields.items():
            node += [self._intern(self.fields, field), value]
        return self.add(node)

    def plan(self, name: str, **fields: Any) -> int:
        return self.classed("p", name, **fields)

    def expr(self, name: str, **fields: Any) -> int:
        return self.classed("e", name, **fields)

    def relation(self, *parts: str, options: dict[str, str] | None = None) -> int:
        pairs = [x for key, value in (options or {}).items() for x in (key, value)]
        return self.plan(
            ANALYSIS + "UnresolvedRelation",
            multipartIdentifier=self.seq(*parts),
            options=self.add(["m", *pairs]),
            isStreaming=False,
        )

    def call(self, *parts: str) -> int:
        return self.expr(
            ANALYSIS + "UnresolvedFunction",
            nameParts=self.seq(*parts),
            arguments=self.seq(),
            isDistinct=False,
            filter=self.seq(),
            ignoreNulls=False,
            orderingWithinGroup=self.seq(),
            isInternal=False,
        )

    def project(self, child: Any, *expressions: Any) -> int:
        return self.plan(LOGICAL + "Project", projectList=self.seq(*expressions), child=child)

    def with_ctes(self, child: Any, *ctes: tuple[str, Any], recursive: bool = False) -> int:
        definitions = [
            self.classed("o", "scala.Tuple3", _1=name, _2=query, _3=self.seq())
            for name, query in ctes
        ]
        return self.plan(
            LOGICAL + "UnresolvedWith",
            child=child,
            cteRelations=self.seq(*definitions),
            allowRecursion=recursive,
        )

    def done(self, root: Any) -> SparkTree:
        return SparkTree(
            {"root": root, "nodes": self.nodes, "classes": self.classes, "fields": self.fields}
        )


ALLOWED = Allowed.of(["__tessera_r1"], ["__tessera_f1"])


def test_registered_relation_and_function_pass_and_are_counted() -> None:
    t = Tree()
    root = t.project(t.relation("__TESSERA_R1"), t.call("__tessera_f1"), t.call("upper"))
    refs = check_tree(t.done(root), ALLOWED)
    assert refs.relations == {"__tessera_r1": 1}
    assert refs.functions == {"__tessera_f1": 1}


@pytest.mark.parametrize(
    "parts",
    [("text", "/etc/passwd"), ("orders",), ("spark_catalog", "default", "t"), ("a", "b")],
)
def test_any_other_relation_is_refused(parts: tuple[str, ...]) -> None:
    t = Tree()
    with pytest.raises(ForbiddenSql, match="not a table or view the planner resolved"):
        check_tree(t.done(t.project(t.relation(*parts))), ALLOWED)


def test_relation_options_are_refused() -> None:
    t = Tree()
    root = t.project(t.relation("__tessera_r1", options={"path": "/etc"}))
    with pytest.raises(ForbiddenSql, match="Table options in a query"):
        check_tree(t.done(root), ALLOWED)


@pytest.mark.parametrize(
    ("parts", "fragment"),
    [
        (("java_method",), r"java_method\(\) is not allowed"),
        (("REFLECT",), r"reflect\(\) is not allowed"),
        (("system", "builtin", "abs"), "neither a Spark built-in"),
        (("no_such_function",), "neither a Spark built-in"),
    ],
)
def test_functions_outside_builtins_and_aliases_are_refused(
    parts: tuple[str, ...], fragment: str
) -> None:
    t = Tree()
    with pytest.raises(ForbiddenSql, match=fragment):
        check_tree(t.done(t.project(t.relation("__tessera_r1"), t.call(*parts))), ALLOWED)


def test_cte_names_are_scoped_like_spark() -> None:
    t = Tree()
    first = t.project(t.relation("__tessera_r1"))
    second = t.project(t.relation("a"))  # sees a: defined before it
    root = t.with_ctes(t.project(t.relation("b")), ("a", first), ("b", second))
    check_tree(t.done(root), ALLOWED)

    t = Tree()
    early = t.project(t.relation("b"))  # b is defined after it: not in scope
    root = t.with_ctes(t.project(t.relation("a")), ("a", early), ("b", t.project(t.relation("a"))))
    with pytest.raises(ForbiddenSql, match="`b`"):
        check_tree(t.done(root), ALLOWED)


def test_a_cte_sees_itself_only_when_recursive() -> None:
    t = Tree()
    root = t.with_ctes(t.project(t.relation("c")), ("c", t.project(t.relation("c"))))
    with pytest.raises(ForbiddenSql):
        check_tree(t.done(root), ALLOWED)
    t = Tree()
    root = t.with_ctes(
        t.project(t.relation("c")), ("c", t.project(t.relation("c"))), recursive=True
    )
    check_tree(t.done(root), ALLOWED)


def test_a_cte_named_like_a_path_does_not_cover_the_path() -> None:
    t = Tree()
    root = t.with_ctes(
        t.project(t.relation("text", "/etc/passwd")),
        ("text, /etc/passwd", t.project(t.relation("__tessera_r1"))),
    )
    with pytest.raises(ForbiddenSql, match=r"`text`\.`/etc/passwd`"):
        check_tree(t.done(root), ALLOWED)


@pytest.mark.parametrize(
    ("kind", "name", "construct"),
    [
        ("plan", LOGICAL + "ScriptTransformation", "ScriptTransformation"),
        ("plan", LOGICAL + "InsertIntoDir", "InsertIntoDir"),
        ("plan", "org.apache.spark.sql.execution.command.SetCommand", "SetCommand"),
        (
            "expr",
            ANALYSIS + "ExpressionWithUnresolvedIdentifier",
            "ExpressionWithUnresolvedIdentifier",
        ),
        ("expr", "org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke", "StaticInvoke"),
        (
            "opaque",
            "org.apache.spark.sql.catalyst.parser.AstBuilder$$Lambda$1",
            "AstBuilder$$Lambda$1",
        ),
        (
            "product",
            "org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat",
            "CatalogStorageFormat",
        ),
    ],
)
def test_classes_off_the_allow_list_are_refused(kind: str, name: str, construct: str) -> None:
    t = Tree()
    tag = {"plan": "p", "expr": "e", "opaque": "q", "product": "o"}[kind]
    odd = t.classed(tag, name)
    root = t.project(t.relation("__tessera_r1"), odd) if kind != "plan" else odd
    with pytest.raises(ForbiddenSql) as refused:
        check_tree(t.done(root), ALLOWED)
    assert refused.value.details["construct"] == construct.rstrip("$")


def test_roots_must_be_of_their_kind() -> None:
    t = Tree()
    expression = t.call("upper")
    with pytest.raises(ForbiddenSql, match="other than a query"):
        check_tree(t.done(expression), ALLOWED, "query")
    t = Tree()
    query = t.project(t.relation("__tessera_r1"))
    with pytest.raises(ForbiddenSql, match="other than an expression"):
        check_tree(t.done(query), ALLOWED, "expression")
    with pytest.raises(ForbiddenSql):
        check_tree(t.done(query), ALLOWED, "explain")


def test_a_long_chain_is_walked_without_recursion() -> None:
    t = Tree()
    node = t.relation("__tessera_r1")
    for _ in range(50_000):
        node = t.plan(LOGICAL + "Filter", condition=t.call("upper"), child=node)
    check_tree(t.done(node), ALLOWED)


def test_references_must_match_the_planners_tokens() -> None:
    t = Tree()
    refs = check_tree(t.done(t.project(t.relation("__tessera_r1"))), ALLOWED)
    check_references("SELECT * FROM `__tessera_r1` AS `o`", refs, ALLOWED)
    with pytest.raises(ForbiddenSql, match="read this statement differently"):
        check_references("SELECT * FROM `__tessera_r1` JOIN `__tessera_r1`", refs, ALLOWED)


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        ("SELECT 'a' -- x", "XXXXXXHSSSHHHHH"),
        ("SELECT `a``b`", "XXXXXXHQQQQQQ"),
        ("SELECT X'CA'", "XXXXXXHXSSSS"),
        ("SELECT /* c */ 1", "XXXXXXHHHHHHHHHX"),
        ("SELECT /*+ A('x') */ 1", "XXXXXXHXXXHXXSSSXHXXHX"),
    ],
)
def test_lexical_classes(text: str, classes: str) -> None:
    assert lexical_classes(text).decode() == classes


def test_lexing_disagreement_is_refused_with_its_place() -> None:
    text = "SELECT 1 -- c \\\n, 2"
    ours = lexical_classes(text).decode()
    theirs = ours[:16] + "HHH"  # Spark continues the comment onto the next line
    with pytest.raises(ForbiddenSql) as refused:
        check_lexing(text, theirs)
    assert refused.value.details == {"checked_by": "spark_lexer", "line": 2, "column": 1}
    assert "Tessera reads code, Spark reads a comment" in refused.value.message
    check_lexing(text, ours)
