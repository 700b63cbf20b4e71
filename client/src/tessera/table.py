"""Lazy tables: every operation composes a sqlglot AST; nothing runs until asked."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]
import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError as SqlglotParseError

from tessera import changelog
from tessera.errors import ParseError, ValidationError
from tessera.result import Row, TableResult
from tessera.schema import ResolvedSchema
from tessera.sql import DIALECT, parse_expression, parse_query, path_sql

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


def _ordered(text: str) -> exp.Ordered:
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(
            "VALIDATION_ERROR", f"An ORDER BY item must be SQL text, not {text!r}."
        )
    try:
        parsed = sqlglot.parse_one(text, dialect=DIALECT, into=exp.Ordered)
    except SqlglotParseError as exc:
        raise ParseError(
            "PARSE_ERROR", f"Could not parse the ORDER BY item {text!r}: {exc}", {"text": text}
        ) from exc
    if not isinstance(parsed, exp.Ordered):
        parsed = exp.Ordered(this=parsed, desc=False)
    return parsed


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

    def select(self, *sql_exprs: str) -> Table:
        """``SELECT sql_exprs FROM this``."""
        if not sql_exprs:
            raise ValidationError("VALIDATION_ERROR", "select() needs at least one expression.")
        projections = [parse_expression(e, alias=True) for e in sql_exprs]
        query = self._base()  # keeps the FROM, joins and WHERE: aliases stay visible
        query.set("expressions", projections)
        return self._new(query)

    def where(self, sql_predicate: str) -> Table:
        """Rows of this table for which the predicate holds (``filter`` is the same)."""
        return self._new(self._base().where(parse_expression(sql_predicate)))

    filter = where

    def group_by(self, *sql_exprs: str) -> GroupedTable:
        """Group rows; call ``.select(...)`` on the result for the aggregates."""
        return GroupedTable(self, [parse_expression(e) for e in sql_exprs])

    def join(self, table: Table, on_sql: str | None = None, how: str = "inner") -> Table:
        """Join with another table on a SQL condition (``how``: inner, left, right, full,
        left_semi, left_anti, cross)."""
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
        if on_sql is not None:
            args["on"] = parse_expression(on_sql)
        elif how != "cross":
            raise ValidationError("VALIDATION_ERROR", f"A {how} join needs a condition (on_sql).")
        query = exp.select("*").from_(self._from())
        query.append("joins", exp.Join(**args))
        return self._new(query)

    def order_by(self, *sql_exprs: str) -> Table:
        """Order rows (``"price DESC"``, ``"name"``)."""
        return self._new(self._base().order_by(*[_ordered(e) for e in sql_exprs], copy=False))

    def limit(self, n: int, offset: int = 0) -> Table:
        """At most ``n`` rows (after ``offset``)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValidationError("VALIDATION_ERROR", f"limit() takes a count >= 0, not {n!r}.")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("VALIDATION_ERROR", f"offset must be >= 0, not {offset!r}.")
        query = self._base(keep_order=True).limit(n)
        if offset:
            query = query.offset(offset)
        return self._new(query)

    def distinct(self) -> Table:
        """Distinct rows."""
        return self._new(self._base().distinct())

    def union_all(self, table: Table) -> Table:
        """Rows of both tables (``UNION ALL``)."""
        left = exp.select("*").from_(self._from())
        right = exp.select("*").from_(table._from())
        return self._new(exp.union(left, right, distinct=False))

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

    def execute_insert(self, path: str, overwrite: bool = False) -> TableResult:
        """``INSERT INTO|OVERWRITE path`` this query: a write job."""
        return self._env._submit(self.insert_sql(path, overwrite))

    def insert_sql(self, path: str, overwrite: bool = False) -> str:
        """The ``INSERT`` statement that writes this table into ``path``."""
        verb = "OVERWRITE" if overwrite else "INTO"
        return f"INSERT {verb} {path_sql(path)} {self.sql}"

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


class GroupedTable:
    """A table grouped by expressions; :meth:`select` gives the aggregated table."""

    def __init__(self, table: Table, keys: list[exp.Expr]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *sql_exprs: str) -> Table:
        """``SELECT sql_exprs FROM table GROUP BY keys``."""
        if not sql_exprs:
            raise ValidationError("VALIDATION_ERROR", "select() needs at least one expression.")
        projections = [parse_expression(e, alias=True) for e in sql_exprs]
        query = self._table._base()
        query.set("expressions", projections)
        if self._keys:
            query = query.group_by(*[k.copy() for k in self._keys], copy=False)
        return self._table._new(query)
