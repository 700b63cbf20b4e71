"""How many columns a query produces, when its select list says so (``output_width``)."""

from __future__ import annotations

from sqlglot import exp

from core.identifiers import name_key

# Table-generating functions: one call can produce several columns.
_GENERATORS = frozenset(
    {
        "explode",
        "explode_outer",
        "posexplode",
        "posexplode_outer",
        "inline",
        "inline_outer",
        "stack",
        "json_tuple",
    }
)


def _function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return name_key(str(node.name))
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return ""


def output_width(tree: exp.Expr) -> int | None:
    """How many columns a query produces, when its select list is plain (no ``*``, no
    generator); None when that cannot be told from the text.

    A set operation has the width of its first branch that tells (left first); the branches
    are tried from a stack, not by recursion, because a long UNION chain is a left-deep
    tree thousands of levels deep.
    """
    pending: list[exp.Expr] = [tree]
    while pending:
        node = pending.pop()
        while isinstance(node, exp.Subquery):
            node = node.this
        if isinstance(node, exp.SetOperation):
            pending.append(node.expression)  # tried after the whole left branch
            pending.append(node.this)
            continue
        width = _plain_width(node)
        if width is not None:
            return width
    return None


def _plain_width(node: exp.Expr) -> int | None:
    """The width of one SELECT or VALUES (None when its select list does not say)."""
    if isinstance(node, exp.Values):
        rows = list(node.expressions)
        if not rows:
            return None
        first = rows[0]
        return len(first.expressions) if isinstance(first, exp.Tuple) else 1
    if not isinstance(node, exp.Select):
        return None
    width = 0
    for expression in node.expressions:
        if isinstance(expression, exp.Aliases):  # gen(…) AS (a, b): one column per name
            width += len(expression.expressions)
            continue
        inner = expression.this if isinstance(expression, exp.Alias) else expression
        if inner.is_star or _function_name(inner) in _GENERATORS:
            return None
        width += 1
    return width
