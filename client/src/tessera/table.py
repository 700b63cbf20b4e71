"""Lazy tables: every operation composes a sqlglot AST; nothing runs until asked."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError as SqlglotParseError

from tessera import changelog, grouping
from tessera.errors import ParseError, ValidationError
from tessera.expressions import Expression, IntoExpression, Ordering, to_node
from tessera.grouping import AggregatedTable, GroupedTable
from tessera.result import Row, TableResult
from tessera.schema import ResolvedSchema
from tessera.sql import DIALECT, parse_query, path_sql, quote_identifier, string_literal
from tessera.windows import GroupWindow, OverWindow, OverWindowedTable, WindowedTable

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas  # type: ignore[import-untyped]

    from tessera.environment import TableEnvironment

_aliases = itertools.count(1)
JOIN_KINDS = {
    "inner": ("", "INNER"),
    "left": ("LEFT", "OUTER"),
    "right": ("RIGHT", "OUTER"),
    "full": ("FULL", "OUTER"),
    "left_semi": ("LEFT", "SEMI"),
    "left_anti": ("LEFT", "ANTI"),
    "cross": ("", "CROSS"),
}


QUERY_STARTS = {"SELECT", "WITH", "VALUES", "TABLE", "FROM"}


def _starts_a_query(text: str) -> bool:
    """Whether ``text`` begins (after comments and parentheses) as a query does: the check
    behind :meth:`TableEnvironment.sql_query` when sqlglot cannot parse the rest."""
    try:
        tokens = Spark().tokenize(text)
    except Exception:  # sqlglot's tokenizer raises its own errors
        return False
    for token in tokens:
        if token.token_type.name == "L_PAREN":
            continue
        return token.text.upper() in QUERY_STARTS
    return False


def _ordered(item: IntoExpression | Ordering) -> exp.Ordered:
    if isinstance(item, Ordering):
        return item.node.copy()
    if isinstance(item, Expression):
        return exp.Ordered(this=to_node(item), desc=False)
    if not isinstance(item, str) or not item.strip():
        raise ValidationError(
            "VALIDATION_ERROR", f"An ORDER BY item must be SQL text, not {item!r}."
        )
    try:
        parsed = sqlglot.parse_one(item, dialect=DIALECT, into=exp.Ordered)
    except SqlglotParseError as exc:
        raise ParseError(
            "PARSE_ERROR", f"Could not parse the ORDER BY item {item!r}: {exc}", {"text": item}
        ) from exc
    if not isinstance(parsed, exp.Ordered):
        parsed = exp.Ordered(this=parsed, desc=False)
    return parsed


def _count(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError("VALIDATION_ERROR", f"{what} takes a count >= 0, not {value!r}.")
    return value


class Table:
    """A lazy table: a SQL query built from operations, run by :meth:`execute` and friends.

    Every operation returns a new Table; the query runs through the server's planner and SQL
    guard like any typed statement.
    """

    def __init__(
        self,
        env: TableEnvironment,
        query: exp.Query | None,
        source: exp.Table | None = None,
        alias: str | None = None,
        text: str | None = None,
    ) -> None:
        self._env = env
        self._parsed = query
        self._text = text  # a query as its user wrote it (sql_query): sent as written
        self._source = source  # set when the query is exactly SELECT * FROM source
        self._alias = alias

    @classmethod
    def of_text(cls, env: TableEnvironment, text: str) -> Table:
        """A Table over a query as written. It runs as written (Spark's parser judges it);
        operations composed on it need sqlglot to read it, and say so when it cannot."""
        try:
            return cls(env, parse_query(text), text=text)
        except ParseError as error:
            if not _starts_a_query(text):
                raise
            table = cls(env, None, text=text)
            table._unreadable = error
            return table

    _unreadable: ParseError | None = None

    @property
    def _query(self) -> exp.Query:
        if self._parsed is None:
            error = self._unreadable
            raise ParseError(
                "PARSE_ERROR",
                "This query runs as written (execute, to_pandas, collect), but the client's "
                "SQL composer (sqlglot) cannot read it, so no operation can be built on it; "
                f"wrap it in a view or use execute_sql. {error.message if error else ''}".strip(),
                dict(error.details) if error else {},
            )
        return self._parsed

    # --- the SQL -------------------------------------------------------------------------

    @property
    def sql(self) -> str:
        """The query's SQL text (Spark dialect): as written for :meth:`TableEnvironment.sql_query`,
        else as composed."""
        if self._text is not None:
            return self._text
        return self._query.sql(dialect=DIALECT)

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"Table({self.sql!r})"

    def _from(self) -> exp.Expr:
        """This table as a FROM item, under its alias."""
        if self._source is not None:
            node = self._source.copy()
            if self._alias is not None:
                node.set("alias", exp.TableAlias(this=exp.to_identifier(self._alias, quoted=True)))
            return node
        alias = self._alias or f"_t{next(_aliases)}"
        return self._query.subquery(exp.to_identifier(alias, quoted=True), copy=True)

    def _new(self, query: exp.Query) -> Table:
        return Table(self._env, query)

    def _base(self, *, keep_order: bool = False) -> exp.Select:
        """A ``SELECT *`` over this table that a clause can be added to."""
        q = self._query
        plain = (
            isinstance(q, exp.Select)
            and self._alias is None
            and len(q.expressions) == 1
            and isinstance(q.expressions[0], exp.Star)
            and not any(q.args.get(k) for k in ("group", "having", "distinct", "limit", "offset"))
            and (keep_order or not q.args.get("order"))
            and not q.args.get("with")
        )
        if plain:
            assert isinstance(q, exp.Select)
            return q.copy()
        return exp.select("*").from_(self._from())

    # --- operations ----------------------------------------------------------------------

    def select(self, *fields: IntoExpression) -> Table:
        """``SELECT fields FROM this`` (SQL text or :mod:`tessera.expressions`)."""
        query = self._base()  # keeps the FROM, joins and WHERE: aliases stay visible
        query.set("expressions", grouping.projections(fields, "select"))
        return self._new(query)

    def where(self, predicate: IntoExpression) -> Table:
        """Rows of this table for which the predicate holds (``filter`` is the same)."""
        return self._new(self._base().where(to_node(predicate)))

    filter = where

    def group_by(self, *keys: IntoExpression) -> GroupedTable:
        """Group rows; call ``.select(...)`` on the result for the aggregates."""
        return GroupedTable(self, [to_node(e) for e in keys])

    def aggregate(self, *aggregates: IntoExpression) -> AggregatedTable:
        """Named aggregates over all rows; ``.select(...)`` picks from them."""
        return GroupedTable(self, []).aggregate(*aggregates)

    def window(self, window: GroupWindow) -> WindowedTable:
        """A group window (``Tumble``, ``Slide``, ``Session``); ``.group_by(col("w"), …)``
        then ``.select(…)``."""
        return WindowedTable(self, window)

    def over_window(self, *windows: OverWindow) -> OverWindowedTable:
        """Over windows (``Over.partition_by(…).order_by(…)…alias("w")``) for ``.select``,
        where ``agg.over(col("w"))`` uses one."""
        return OverWindowedTable(self, windows)

    def join(
        self,
        table: Table,
        on: IntoExpression | None = None,
        how: str = "inner",
        *,
        on_sql: str | None = None,
    ) -> Table:
        """Join with another table on a condition (``how``: inner, left, right, full,
        left_semi, left_anti, cross). ``on_sql`` is ``on``'s older name."""
        if on_sql is not None:
            if on is not None:
                raise ValidationError("VALIDATION_ERROR", "Give on or on_sql, not both.")
            on = on_sql
        if how not in JOIN_KINDS:
            raise ValidationError(
                "VALIDATION_ERROR", f"Unknown join kind {how!r}; use one of {sorted(JOIN_KINDS)}."
            )
        side, kind = JOIN_KINDS[how]
        args: dict[str, Any] = {"this": table._from()}
        if side:
            args["side"] = side
        if kind:
            args["kind"] = kind
        if on is not None:
            args["on"] = to_node(on)
        elif how != "cross":
            raise ValidationError("VALIDATION_ERROR", f"A {how} join needs a condition (on).")
        query = exp.select("*").from_(self._from())
        query.append("joins", exp.Join(**args))
        return self._new(query)

    def order_by(self, *items: IntoExpression | Ordering) -> Table:
        """Order rows (``"price DESC"``, ``col("price").desc()``, ``"name"``)."""
        return self._new(self._base().order_by(*[_ordered(e) for e in items], copy=False))

    def limit(self, n: int, offset: int = 0) -> Table:
        """At most ``n`` rows (after ``offset``)."""
        query = self._base(keep_order=True).limit(_count(n, "limit()"))
        if _count(offset, "offset"):
            query = query.offset(offset)
        return self._new(query)

    def offset(self, n: int) -> Table:
        """Rows after the first ``n`` (``OFFSET``); ``fetch`` may follow, as in PyFlink."""
        return self._new(self._base(keep_order=True).offset(_count(n, "offset()")))

    def fetch(self, n: int) -> Table:
        """The first ``n`` rows (``LIMIT``), after an ``offset()`` if one came before."""
        q = self._parsed
        if isinstance(q, exp.Select) and q.args.get("offset") and not q.args.get("limit"):
            return self._new(q.copy().limit(_count(n, "fetch()")))
        return self._new(self._base(keep_order=True).limit(_count(n, "fetch()")))

    def distinct(self) -> Table:
        """Distinct rows."""
        return self._new(self._base().distinct())

    def _set(self, table: Table, kind: type[exp.SetOperation], distinct: bool) -> Table:
        left = exp.select("*").from_(self._from())
        right = exp.select("*").from_(table._from())
        return self._new(kind(this=left, expression=right, distinct=distinct))

    def union(self, table: Table) -> Table:
        """Distinct rows of both tables (``UNION``)."""
        return self._set(table, exp.Union, True)

    def union_all(self, table: Table) -> Table:
        """Rows of both tables (``UNION ALL``)."""
        return self._set(table, exp.Union, False)

    def minus(self, table: Table) -> Table:
        """Distinct rows of this table not in the other (``EXCEPT``)."""
        return self._set(table, exp.Except, True)

    def minus_all(self, table: Table) -> Table:
        """Rows of this table not matched by one in the other (``EXCEPT ALL``)."""
        return self._set(table, exp.Except, False)

    def intersect(self, table: Table) -> Table:
        """Distinct rows in both tables (``INTERSECT``)."""
        return self._set(table, exp.Intersect, True)

    def intersect_all(self, table: Table) -> Table:
        """Rows in both tables, as often as in both (``INTERSECT ALL``)."""
        return self._set(table, exp.Intersect, False)

    def add_columns(self, *fields: IntoExpression) -> Table:
        """This table's columns and new, named ones (a name taken already is refused).
        Reads the schema (``get_schema``) to know the columns."""
        return grouping.add_columns(self, fields, replace=False)

    def add_or_replace_columns(self, *fields: IntoExpression) -> Table:
        """Like :meth:`add_columns`, a new column named as an old one taking its place."""
        return grouping.add_columns(self, fields, replace=True)

    def drop_columns(self, *fields: IntoExpression) -> Table:
        """Every column but these (``col("a")`` or ``"a"``)."""
        return grouping.drop_columns(self, fields)

    def rename_columns(self, *fields: IntoExpression) -> Table:
        """Columns renamed: ``col("a").alias("b")`` or ``"a AS b"``."""
        return grouping.rename_columns(self, fields)

    def alias(self, name: str) -> Table:
        """The same table under a name, to qualify columns (``o.id``) in later operations."""
        if not isinstance(name, str) or not name:
            raise ValidationError("VALIDATION_ERROR", "alias() needs a name.")
        if self._parsed is None:
            self._query  # noqa: B018  (raises: an alias is only for composing)
        return Table(self._env, self._parsed, self._source, name, self._text)

    # --- running -------------------------------------------------------------------------

    def get_schema(self) -> ResolvedSchema:
        """The columns this table has, without reading its rows.

        A table read by path is resolved by the server's ``/resolve`` (no Spark); any other
        query is planned by Spark with ``LIMIT 0`` (no rows are read).
        """
        if self._source is not None:
            found = self._env._resolve(self._source)
            schema = (found.get("object") or {}).get("resolved_schema")
            if schema:
                return ResolvedSchema.from_json(schema)
        probe = exp.select("*").from_(self._from()).limit(0)
        return self._env._submit(probe.sql(dialect=DIALECT)).get_resolved_schema()

    def print_schema(self) -> None:
        """Print the columns and their types (:meth:`get_schema`)."""
        print(self.get_schema())

    def execute(self) -> TableResult:
        """Run the query: a job whose result can be read whole."""
        return self._env._submit(self.sql, row_limit=self._env.row_limit)

    def to_arrow(self) -> pa.Table:
        """Run the query and return the whole result as Arrow."""
        return self.execute().to_arrow()

    def to_pandas(self) -> pandas.DataFrame:
        """Run the query and return the whole result as a pandas DataFrame."""
        return self.execute().to_pandas()

    def collect(self) -> Iterator[Row]:
        """Run the query and iterate over its rows."""
        return self.execute().collect()

    def to_data_frame(self, spark: Any = None) -> Any:
        """Run the query and return the result as a DataFrame of the given SparkSession.

        In a pipeline job (the in-worker runtime) it is a live DataFrame of the worker's
        SparkSession instead: nothing is copied, and ``spark`` is not needed."""
        live = self._env._live_data_frame(self)
        if live is not None:
            return live
        if spark is None:
            raise ValidationError(
                "VALIDATION_ERROR", "to_data_frame(spark) needs the SparkSession to copy into."
            )
        arrow = self.to_arrow()
        # The [spark] extra. The Spark schema is read from Arrow's as PySpark itself reads it,
        # but a zone-less timestamp is TIMESTAMP_NTZ (Spark would take it for a TIMESTAMP in
        # the client's zone and shift it).
        from pyspark.sql.pandas.types import from_arrow_schema

        schema = from_arrow_schema(arrow.schema, prefer_timestamp_ntz=True)
        if arrow.num_rows == 0:  # PySpark cannot take an Arrow table without chunks
            return spark.createDataFrame([], schema=schema)
        return spark.createDataFrame(arrow, schema=schema)

    def to_changelog(
        self, start_version: int | None = None, end_version: int | None = None
    ) -> pandas.DataFrame:
        """This table as a changelog (FLIP-136 ``toChangelogStream``): a pandas DataFrame
        whose first column ``op`` holds each row's kind.

        Without versions every row is an insert (``+I``). With ``start_version`` (and
        ``end_version``, default: the table's current data) — only for a table read by path
        (:meth:`TableEnvironment.from_path`) — the changes that turn version
        ``start_version`` into ``end_version``: by the table's primary key ``+I`` for new
        keys, ``-D`` for removed ones, ``-U`` then ``+U`` for changed rows, ordered by key;
        without a key, ``-D``/``+I`` for the rows that differ.
        """
        return self._env.sql_query(self.changelog_sql(start_version, end_version)).to_pandas()

    def changelog_sql(
        self, start_version: int | None = None, end_version: int | None = None
    ) -> str:
        """The query behind :meth:`to_changelog`."""
        if start_version is None and end_version is None:
            if changelog.OP in self.get_schema().column_names:
                raise ValidationError(
                    "VALIDATION_ERROR",
                    "This table has a column `op` already; a changelog adds `op` for the row "
                    "kind. Rename the column first (select(...)).",
                )
            query = exp.select(
                exp.alias_(exp.Literal.string("+I"), changelog.OP, quoted=True), exp.Star()
            ).from_(self._from())
            return query.sql(dialect=DIALECT)
        if self._source is None:
            raise ValidationError(
                "VALIDATION_ERROR",
                "Changes between versions are for a table read by path (from_path), not for "
                "a query.",
            )
        start = _version(start_version, "start_version")
        path = self._source.sql(dialect=DIALECT)
        old = f"(SELECT * FROM {path} VERSION AS OF {start})"
        if end_version is None:
            new = f"(SELECT * FROM {path})"
        else:
            new = f"(SELECT * FROM {path} VERSION AS OF {_version(end_version, 'end_version')})"
        schema = self.get_schema()
        key = tuple((schema.primary_key or {}).get("columns") or ())
        return changelog.changes_sql(old, new, schema.column_names, key)

    def changes(self, start_version: int, end_version: int | None = None) -> Table:
        """The change data feed of a managed Delta table read by path
        (:meth:`TableEnvironment.from_path`): ``table_changes`` from ``start_version`` to
        ``end_version`` (default: the table's current version), a lazy :class:`Table` of the
        changed rows with Delta's ``_change_type`` (``insert``, ``update_preimage``,
        ``update_postimage``, ``delete``), ``_commit_version`` and ``_commit_timestamp``.
        Unlike :meth:`to_changelog` between versions, every change of every version is a
        row (not the net change), and other tables are refused by the server."""
        return Table.of_text(self._env, self.changes_sql(start_version, end_version))

    def changes_sql(self, start_version: int, end_version: int | None = None) -> str:
        """The query behind :meth:`changes`."""
        if self._source is None:
            raise ValidationError(
                "VALIDATION_ERROR",
                "A table's changes are for a table read by path (from_path), not for a query.",
            )
        name = string_literal(self._source.sql(dialect=DIALECT))
        bounds = [str(_version(start_version, "start_version"))]
        if end_version is not None:
            bounds.append(str(_version(end_version, "end_version")))
        return f"SELECT * FROM table_changes({', '.join([name, *bounds])})"

    def execute_insert(
        self, path: str, overwrite: bool = False, *, by_name: bool = False
    ) -> TableResult:
        """``INSERT INTO|OVERWRITE path`` this query: a write job. ``by_name``: columns go to
        the target's columns of the same names, in any order (not by position)."""
        return self._env._submit(self.insert_sql(path, overwrite, by_name=by_name))

    def insert_sql(self, path: str, overwrite: bool = False, *, by_name: bool = False) -> str:
        """The ``INSERT`` statement that writes this table into ``path``. ``by_name`` lists
        this table's column names as the target's columns (``INSERT INTO p (a, b) …``); the
        server refuses Spark's ``INSERT … BY NAME``. It reads the schema (get_schema)."""
        verb = "OVERWRITE" if overwrite else "INTO"
        columns = ""
        if by_name:
            names = ", ".join(quote_identifier(n) for n in self.get_schema().column_names)
            columns = f" ({names})"
        return f"INSERT {verb} {path_sql(path)}{columns} {self.sql}"

    def explain(self) -> str:
        """Spark's plan of the query (``EXPLAIN``)."""
        result = self._env._submit(f"EXPLAIN {self.sql}").to_arrow()
        if result.num_columns == 0:
            return ""
        return "\n".join(str(v) for v in result.column(0).to_pylist())


def _version(value: int | None, name: str) -> int:
    if value is None or isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(
            "VALIDATION_ERROR",
            f"{name} must be a version number (an integer from 0), not {value!r}.",
            {"field": name},
        )
    return value
