"""Find what a query reads: table references and function calls, with their positions.

The query is parsed with sqlglot (``read="spark"``) only to find references; positions
come from sqlglot's identifier metadata and are checked against our own tokens, so the
caller can splice the user's text instead of regenerating SQL. The guard's syntax-tree
rules run here too, before anything is resolved. The parse itself is
``core.planner.query_parsing``; a query's width, ``core.planner.output_width``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from core.errors import CoreError
from core.identifiers import name_key, quote_path
from core.limits import check_budget
from core.planner import guard, table_changes
from core.planner.errors import ParseError
from core.planner.functions import is_builtin
from core.planner.model import ChangeRange, TimeTravel
from core.planner.output_width import output_width
from core.planner.query_parsing import (
    EXPRESSION_PREFIX,
    check_query_tree,
    offset_at,
    parse_expression,
    parse_region,
)
from core.planner.time_travel import read_clause
from core.planner.tokens import Token, parse_error, tokenize


@dataclass(frozen=True)
class TableRef:
    """A table or view reference: ``parts`` as written, the name's span ``[start, end)``,
    and where `` AS `name` `` goes when the user gave no alias (after TABLESAMPLE etc.).
    ``travel``: its ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause, which ends at
    ``travel_end`` (the rewrite replaces the name and the clause together). ``changes``:
    a ``table_changes('name', …)`` call (``parts`` its table, ``start``/``end`` the call's
    span, replaced by the alias)."""

    parts: tuple[str, ...]
    start: int
    end: int
    has_alias: bool
    alias_at: int
    travel: TimeTravel | None = None
    travel_end: int | None = None
    changes: ChangeRange | None = None

    @property
    def span_end(self) -> int:
        """The end of what the alias replaces: the name, and its time-travel clause."""
        return self.end if self.travel_end is None else self.travel_end


@dataclass(frozen=True)
class FunctionRef:
    """A function call: the name (with qualifiers) as written and its span."""

    parts: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class QueryRefs:
    """The references of one query, each list in source order.

    ``syntax_calls`` are one-part calls of Spark built-ins that sqlglot parses as syntax
    without positions (``floor(x)``, ``trim(x)``, ``substr(…)``): found by their tokens, they
    only matter when a temporary system function of that name shadows the built-in.
    ``width`` is the number of columns a query produces, or None when its select list
    does not say (``*``, ``t.*``, generators such as ``explode``, ``TABLE p``).
    """

    tables: tuple[TableRef, ...]
    functions: tuple[FunctionRef, ...]
    syntax_calls: tuple[FunctionRef, ...] = ()
    width: int | None = None  # columns the query produces, when its select list says so


@dataclass(frozen=True)
class _CteScope:
    """The CTEs a node can see, as a chain of ``WITH`` clauses (innermost first): of each
    clause the CTEs before position ``limit`` (a CTE sees only the ones before it)."""

    positions: dict[str, int]  # CTE name key → its first position in the WITH clause
    limit: int
    outer: _CteScope | None

    def sees(self, key: str) -> bool:
        scope: _CteScope | None = self
        while scope is not None:
            position = scope.positions.get(key)
            if position is not None and position < scope.limit:
                return True
            scope = scope.outer
        return False


def _cte_positions(with_: exp.With) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, cte in enumerate(with_.expressions):
        positions.setdefault(name_key(cte.alias), index)
    return positions


def _tables_and_scopes(tree: exp.Expr) -> Iterator[tuple[exp.Table, _CteScope | None]]:
    """Every table node with the CTEs in scope there, in one walk from the root.

    Scopes are handed down from parent to child, so each node costs O(1) however deep it
    sits and however many CTEs there are (walking up from every table, as this once did,
    was quadratic: 8,000 CTEs took 47 s, a 2 MB chain of ANDs minutes). No recursion:
    left-deep trees (long AND/OR/UNION chains) are thousands of levels deep.
    """
    clauses: dict[int, dict[str, int]] = {}

    def positions(with_: exp.With) -> dict[str, int]:
        found = clauses.get(id(with_))
        if found is None:
            found = clauses[id(with_)] = _cte_positions(with_)
        return found

    stack: list[tuple[exp.Expr, _CteScope | None]] = [(tree, None)]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, exp.Hint):
            # /*+ BROADCAST(b) */ names aliases, not catalog tables; the hint is one token to
            # us, and the worker checks Spark's own parse of it (engine/sqlguard.py).
            continue
        if isinstance(node, exp.Table):
            yield node, scope
        if isinstance(node, exp.With):
            recursive = bool(node.args.get("recursive"))
            for index, cte in enumerate(node.expressions):
                limit = index + 1 if recursive else index
                stack.append((cte, _CteScope(positions(node), limit, scope)))
            continue
        with_ = node.args.get("with_") or node.args.get("with")
        inner = (
            _CteScope(positions(with_), len(with_.expressions), scope)
            if isinstance(with_, exp.With)
            else scope
        )
        for child in node.iter_expressions():
            # The WITH clause itself is not inside its own scope: its CTEs see only the
            # ones before them (above).
            stack.append((child, scope if isinstance(child, exp.With) else inner))


class _Positions:
    """Token lookup by offset, to check sqlglot's positions against our tokens."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = list(tokens)
        self.by_start = {token.start: i for i, token in enumerate(self.tokens)}

    def index(self, node: exp.Expr) -> int | None:
        start = node.meta.get("start")
        end = node.meta.get("end")
        if start is None or end is None:
            return None
        i = self.by_start.get(int(start))
        if i is None or self.tokens[i].end != int(end) + 1:
            return None
        return i

    def dotted_name(self, first: int, last: int) -> tuple[str, ...] | None:
        """The parts of ``name . name …`` between token indexes (inclusive)."""
        parts: list[str] = []
        for k in range(first, last + 1):
            token = self.tokens[k]
            if (k - first) % 2 == 0:
                if not token.is_name:
                    return None
                parts.append(token.text)
            elif not token.is_punct("."):
                return None
        return tuple(parts)

    def skip_balanced(self, i: int) -> int:
        """Index after the parenthesised group starting at ``i`` (a '(' token)."""
        depth = 0
        while i < len(self.tokens):
            token = self.tokens[i]
            if token.is_punct("("):
                depth += 1
            elif token.is_punct(")"):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def alias_position(self, last: int) -> int:
        """Where an alias goes after a table name (or its time-travel clause) ending at
        token ``last``: after any ``TABLESAMPLE (…) [REPEATABLE (…)]`` and ``WITH (…)``
        options."""
        i = last + 1
        end = self.tokens[last].end
        while i + 1 < len(self.tokens) and self.tokens[i + 1].is_punct("("):
            word = self.tokens[i]
            if word.is_word("TABLESAMPLE", "REPEATABLE", "WITH"):
                i = self.skip_balanced(i + 1)
                end = self.tokens[i - 1].end
            else:
                break
        return end


def _table_ref(table: exp.Table, positions: _Positions) -> TableRef | None:
    """The reference of a named table (None for table-valued functions)."""
    name = table.this
    if isinstance(name, exp.Anonymous) and table_changes.is_call(name.name):
        return _changes_ref(table, name, positions)
    if not isinstance(name, exp.Identifier):
        if isinstance(name, exp.Dot):
            shown = quote_path(
                [
                    i.this
                    for i in table.find_all(exp.Identifier)
                    if i.parent is not table.args.get("alias")
                ]
            )
            raise CoreError(f"The table name {shown} has more than three parts.")
        return None
    identifiers = [table.args.get(key) for key in ("catalog", "db", "this")]
    present = [i for i in identifiers if isinstance(i, exp.Identifier)]
    first = positions.index(present[0])
    last = positions.index(present[-1])
    parts = None if first is None or last is None else positions.dotted_name(first, last)
    if first is None or last is None or parts is None:
        raise CoreError(f"Cannot locate the table reference {table.sql(dialect='spark')}.")
    alias = table.args.get("alias")
    has_alias = isinstance(alias, exp.TableAlias) and alias.this is not None
    travel: TimeTravel | None = None
    travel_end: int | None = None
    clause_last = last
    if isinstance(table.args.get("version"), exp.Version):
        travel, clause_last = read_clause(positions.tokens, last + 1, quote_path(parts))
        travel_end = positions.tokens[clause_last].end
    return TableRef(
        parts,
        positions.tokens[first].start,
        positions.tokens[last].end,
        has_alias,
        positions.alias_position(clause_last),
        travel,
        travel_end,
    )


def _changes_ref(table: exp.Table, call: exp.Anonymous, positions: _Positions) -> TableRef:
    """A ``table_changes('name', start [, end])`` call in FROM: the whole call is the span
    the alias replaces (an alias the user wrote stays after it)."""
    at = positions.index(call)
    if at is None:
        raise CoreError(f"Cannot locate the call {call.sql(dialect='spark')}.")
    if table.args.get("version") is not None:
        raise CoreError(
            f"{table_changes.FUNCTION}(…) takes its versions as arguments: it cannot be "
            "followed by VERSION AS OF or TIMESTAMP AS OF."
        )
    changes, last = table_changes.read_call(positions.tokens, at)
    end = positions.tokens[last].end
    return TableRef(changes.parts, positions.tokens[at].start, end, True, end, changes=changes)


def _function_ref(node: exp.Func, positions: _Positions) -> FunctionRef | None:
    """The reference of a call written ``[qualifiers.]name(…)``; None for syntax such as
    CAST or CASE that sqlglot also models as functions."""
    i = positions.index(node)
    if i is None or i + 1 >= len(positions.tokens):
        return None
    if not positions.tokens[i + 1].is_punct("(") or not positions.tokens[i].is_name:
        return None
    first = i
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        qualifiers = [q for q in parent.this.find_all(exp.Identifier)]
        starts = [positions.index(q) for q in qualifiers]
        if not starts or any(s is None for s in starts):
            raise CoreError(f"Cannot locate the function call {parent.sql(dialect='spark')}.")
        first = min(s for s in starts if s is not None)
    parts = positions.dotted_name(first, i)
    if parts is None:
        raise CoreError(f"Cannot locate the function call {node.sql(dialect='spark')}.")
    if len(parts) > 3:
        raise CoreError(f"The function name {quote_path(parts)} has more than three parts.")
    return FunctionRef(parts, positions.tokens[first].start, positions.tokens[i].end)


# Words followed by '(' that are not calls (or are operators) in a query.
_NOT_CALLS = frozenset(
    {
        "ALL",
        "AND",
        "AS",
        "BETWEEN",
        "CASE",
        "CAST",
        "DIV",
        "ELSE",
        "EXISTS",
        "EXTRACT",
        "FILTER",
        "ILIKE",
        "IN",
        "IS",
        "LIKE",
        "NOT",
        "ON",
        "OR",
        "OVER",
        "RLIKE",
        "SOME",
        "THEN",
        "TRY_CAST",
        "USING",
        "VALUES",
        "WHEN",
        "WITHIN",
    }
)
_SUBQUERY_STARTS = ("SELECT", "WITH", "VALUES", "FROM", "TABLE")


def _syntax_calls(positions: _Positions, located: Iterable[int]) -> tuple[FunctionRef, ...]:
    """One-part ``builtin(`` calls whose position sqlglot did not give (see QueryRefs)."""
    seen = set(located)
    tokens = positions.tokens
    calls: list[FunctionRef] = []
    for i, token in enumerate(tokens[:-1]):
        if token.start in seen or not token.is_name or not tokens[i + 1].is_punct("("):
            continue
        if token.kind == "word" and token.upper in _NOT_CALLS:
            continue
        previous = tokens[i - 1] if i > 0 else None
        if previous is not None and (previous.is_punct(".", "::") or previous.is_word("AS")):
            continue
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        if after is not None and after.is_word(*_SUBQUERY_STARTS):
            continue
        if is_builtin(token.text):
            calls.append(FunctionRef((token.text,), token.start, token.end))
    return tuple(calls)


def find_references(tree: exp.Expr, tokens: Sequence[Token]) -> QueryRefs:
    """Collect table references (CTE names excluded) and calls, guarding each one."""
    positions = _Positions(tokens)
    tables: dict[int, TableRef] = {}
    functions: dict[int, FunctionRef] = {}
    for count, (table, scope) in enumerate(_tables_and_scopes(tree)):
        if count % 256 == 255:
            check_budget()
        ref = _table_ref(table, positions)
        if ref is None:
            continue
        guard.check_qualifiers(ref.parts)
        guard.check_file_path_table(ref.parts)
        # table_changes('t', …) names a catalog table, never a common table expression.
        in_scope = scope is not None and scope.sees(name_key(ref.parts[0]))
        if len(ref.parts) == 1 and ref.changes is None and in_scope:
            if ref.travel is not None:
                raise CoreError(
                    f"{ref.travel.text} cannot follow `{ref.parts[0]}`: it names a common "
                    "table expression (WITH), and only managed tables have versions."
                )
            continue
        tables[ref.start] = ref
    for count, node in enumerate(tree.find_all(exp.Func)):
        if count % 256 == 255:
            check_budget()
        if isinstance(node, exp.Anonymous) and table_changes.is_call(node.name):
            if isinstance(node.parent, exp.Table) and node.parent.this is node:
                continue  # read above, as a table reference
            raise CoreError(
                f"{table_changes.FUNCTION}(…) is a table: call it in FROM, as in "
                f"SELECT * FROM {table_changes.EXAMPLE.split(' or ')[0]}."
            )
        call = _function_ref(node, positions)
        if call is None:
            continue
        guard.check_function_name(call.parts)
        functions[call.start] = call
    return QueryRefs(
        tuple(tables[k] for k in sorted(tables)),
        tuple(functions[k] for k in sorted(functions)),
        _syntax_calls(positions, functions),
    )


def analyze_query(text: str, tokens: Sequence[Token]) -> QueryRefs:
    """Parse the query made of ``tokens`` (a region of ``text``), guard it and return its
    references. ``TABLE p`` (which sqlglot does not read) is handled here."""
    if not tokens:
        raise parse_error(text, len(text), "Expected a query")
    guard.check_query_tokens(tokens)
    if tokens[0].is_word("TABLE"):
        return _table_statement(text, tokens)
    check_budget()
    tree = parse_region(text, tokens[0].start, tokens[-1].end)
    check_budget()
    check_query_tree(tree)
    return replace(find_references(tree, tokens), width=output_width(tree))


def _table_statement(text: str, tokens: Sequence[Token]) -> QueryRefs:
    """``TABLE p``: exactly one path and nothing else."""
    positions = _Positions(tokens)
    last = len(tokens) - 1
    parts = positions.dotted_name(1, last) if last >= 1 else None
    if parts is None or len(parts) > 3:
        raise parse_error(
            text, tokens[min(1, last)].start, "Expected a table name after TABLE, and nothing else"
        )
    guard.check_qualifiers(parts)
    guard.check_file_path_table(parts)
    end = tokens[last].end
    return QueryRefs((TableRef(parts, tokens[1].start, end, True, end),), ())


def analyze_expression(expression: str, origin: str, origin_offset: int) -> tuple[str, QueryRefs]:
    """Guard and analyse one SQL expression (a computed column, a function body).

    Returns the parsed source (``SELECT <expression>``, whose offsets the references use)
    and the references; errors point into ``origin`` at ``origin_offset``.
    """
    source = EXPRESSION_PREFIX + expression
    try:
        tokens = tokenize(source)
    except ParseError as error:
        offset = offset_at(source, error.details["line"], error.details["column"])
        where = origin_offset + max(0, offset - len(EXPRESSION_PREFIX))
        raise parse_error(origin, where, error.message.split(" (line")[0]) from None
    guard.check_statement_tokens(tokens)
    guard.check_query_tokens(tokens)
    tree = parse_expression(expression, origin, origin_offset)
    extra = [key for key, value in tree.args.items() if value and key != "expressions"]
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or extra:
        raise parse_error(origin, origin_offset, "Expected a single SQL expression")
    check_query_tree(tree)
    return source, find_references(tree, tokens)
