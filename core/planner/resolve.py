"""Resolve a query's references against the catalog and rewrite it by splicing.

One ``Resolver`` per statement: it gives every distinct table/view an alias
``__tessera_rN`` and every catalog function an alias ``__tessera_fN``, in dependency
order (views and SQL function bodies are expanded first, relative to where they live).
The user's text is rewritten by replacing only the spans of the references.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from core.errors import CoreError, NotFound, missing_object
from core.identifiers import ObjectIdentifier, expand_path, quote_part, quote_path
from core.planner import change_feeds, guard, table_changes, time_travel
from core.planner.authorize import Authorizer, Definer
from core.planner.errors import ForbiddenSql, ParseError
from core.planner.functions import display, is_builtin, is_system, system_identifier
from core.planner.model import (
    CatalogReader,
    ChangeRange,
    FunctionDef,
    PlanContext,
    Relation,
    TimeTravel,
)
from core.planner.plan import FunctionPlan, RelationPlan
from core.planner.positions import Replacement, splice
from core.planner.query_parsing import EXPRESSION_PREFIX
from core.planner.references import QueryRefs, analyze_expression, analyze_query
from core.planner.sources import (
    DATAFRAME_CONNECTOR,
    RATE_CONNECTOR,
    UPLOAD_CONNECTOR,
    is_managed_delta,
    names_delta,
)
from core.planner.table_plans import staged_error, table_plan
from core.planner.tokens import Token, statement_groups, strip_region, tokenize
from core.privileges import Privilege

# Temporary tables of these connectors read no files under a storage root.
_READS_NO_FILES = frozenset({UPLOAD_CONNECTOR, DATAFRAME_CONNECTOR, RATE_CONNECTOR})

RELATION_ALIAS = "__tessera_r{}"
FUNCTION_ALIAS = "__tessera_f{}"


@dataclass(frozen=True)
class Rewritten:
    """A query rewritten two ways: to aliases (to run) and to canonical names (to store);
    ``width`` is the number of columns it produces when its select list says so."""

    sql: str
    expanded: str
    width: int | None = None


def _single_statement(text: str, what: str) -> tuple[list[Token], int]:
    """The tokens of a stored query and where its text ends (trailing comments kept)."""
    groups = statement_groups(tokenize(text), len(text))
    if len(groups) != 1:
        raise CoreError(f"The stored query of {what} is not a single statement.")
    return groups[0][2], strip_region(text, groups[0][0], groups[0][1])[1]


class Resolver:
    """Resolves and registers the objects one statement reads."""

    def __init__(
        self, reader: CatalogReader, context: PlanContext, authorizer: Authorizer | None = None
    ) -> None:
        self.reader = reader
        self.context = context
        # The statement's checks (a resolver of its own when planning outside a statement).
        self.authorizer = authorizer if authorizer is not None else Authorizer(reader)
        self.relations: list[RelationPlan] = []
        self.functions: list[FunctionPlan] = []
        self.objects: list[Relation | FunctionDef] = []
        self._relation_aliases: dict[tuple[str, ...], tuple[str, ObjectIdentifier]] = {}
        self._function_aliases: dict[tuple[str, str, str], tuple[str, ObjectIdentifier]] = {}
        # What each alias stands for, for the checks of later references to it.
        self._registered: dict[tuple[str, ...], Relation | FunctionDef] = {}
        self._not_system: set[tuple[str, str, str]] = set()
        self._expanding: list[tuple[str, ObjectIdentifier]] = []
        # Whose rights the references being resolved are checked with: the innermost
        # permanent view or SQL function being expanded (definer rights); empty: the invoker.
        self._definers: list[Definer | None] = []

    # -- queries ------------------------------------------------------------------------

    def rewrite_query(
        self,
        text: str,
        tokens: Sequence[Token],
        catalog: str | None,
        database: str | None,
        end: int | None = None,
        start: int | None = None,
        *,
        refs: QueryRefs | None = None,
    ) -> Rewritten:
        """Guard, resolve and rewrite the query made of ``tokens``: the region of ``text``
        from ``start`` to ``end`` (by default its first and last token; pass wider bounds
        to keep the comments around it). ``refs``: its analysis, when already done."""
        if refs is None:
            refs = analyze_query(text, tokens)
        begin = tokens[0].start if start is None else start
        stop = tokens[-1].end if end is None else end
        rewritten = self._rewrite(text, begin, stop, refs, catalog, database)
        return replace(rewritten, width=refs.width)

    def _rewrite(
        self,
        text: str,
        start: int,
        end: int,
        refs: QueryRefs,
        catalog: str | None,
        database: str | None,
    ) -> Rewritten:
        run: list[Replacement] = []
        canonical: list[Replacement] = []
        for ref in refs.tables:
            if ref.changes is not None:
                alias, ident = self.changes(ref.changes, catalog, database)
                named = table_changes.canonical_call(ref.changes, ident.quoted())
                canonical.append((ref.start, ref.end, named))
                run.append((ref.start, ref.end, quote_part(alias)))
                continue
            alias, ident = self.relation(ref.parts, catalog, database, ref.travel)
            canonical.append((ref.start, ref.end, ident.quoted()))  # the clause stays
            span_end = ref.span_end  # Spark sees the alias only, never a time-travel clause
            if ref.has_alias:
                run.append((ref.start, span_end, quote_part(alias)))
            elif ref.alias_at == span_end:
                run.append(
                    (ref.start, span_end, f"{quote_part(alias)} AS {quote_part(ref.parts[-1])}")
                )
            else:
                run.append((ref.start, span_end, quote_part(alias)))
                run.append((ref.alias_at, ref.alias_at, f" AS {quote_part(ref.parts[-1])}"))
        for call in refs.functions:
            resolved = self.function(call.parts, catalog, database)
            if resolved is not None:
                alias, ident = resolved
                run.append((call.start, call.end, quote_part(alias)))
                if not is_system(ident):  # a system function stays a one-part name
                    canonical.append((call.start, call.end, ident.quoted()))
        for call in refs.syntax_calls:
            resolved = self.system_function(call.parts[0])
            if resolved is not None:
                run.append((call.start, call.end, quote_part(resolved[0])))
        return Rewritten(splice(text, start, end, run), splice(text, start, end, canonical))

    # -- relations ----------------------------------------------------------------------

    def relation(
        self,
        parts: Sequence[str],
        catalog: str | None,
        database: str | None,
        travel: TimeTravel | None = None,
    ) -> tuple[str, ObjectIdentifier]:
        """The alias of a table or view (registering it and what it reads on first use);
        with ``travel``, of that version of a managed table (each version its own alias)."""
        ident = expand_path(parts, catalog, database)
        if travel is not None:
            return self._version(ident, travel)
        known = self._relation_aliases.get(ident.key)
        if known is not None:
            # Checked per reference: read directly and through a view, both rights count.
            self._require(self._registered[ident.key], Privilege.SELECT, ident)
            return known
        self._check_cycle("view", ident)
        relation = self.reader.get_relation(ident)
        if relation is None:
            raise self._not_found(f"Table or view {ident.quoted()} not found", ident)
        self._require(relation, Privilege.SELECT, ident)
        self._require_files_of(relation)
        ident = relation.identifier
        if relation.kind == "view":
            with self._expanding_object("view", ident), self._inside(relation):
                sql = self._view_sql(relation)
        elif relation.status == "staged":
            raise staged_error(relation)
        alias = RELATION_ALIAS.format(len(self.relations) + 1)
        if relation.kind == "view":
            plan = RelationPlan(alias, ident.parts, "view", sql=sql, temporary=relation.temporary)
        else:
            plan = self._table_plan(alias, relation)
        self.relations.append(plan)
        self.objects.append(relation)
        self._relation_aliases[ident.key] = (alias, ident)
        self._registered[ident.key] = relation
        return alias, ident

    def _version(self, ident: ObjectIdentifier, travel: TimeTravel) -> tuple[str, ObjectIdentifier]:
        """A version of a permanent managed table, registered as a relation of its own
        (reading the version's directory): two versions of one table are two relations."""
        relation = self.reader.get_relation(ident)
        if relation is None:
            raise self._not_found(f"Table or view {ident.quoted()} not found", ident)
        self._require(relation, Privilege.SELECT, ident)
        ident = relation.identifier
        if (
            relation.kind == "table"
            and "path" in relation.options
            and names_delta(relation.options)
        ):
            return self._delta_version(relation, travel)
        what = time_travel.unversioned(relation)
        if what:
            raise CoreError(
                f"{travel.text} cannot read {ident.quoted()}: it is {what}, and only permanent "
                "managed tables and external Delta tables have versions.",
                details={"identifier": list(ident.parts)},
            )
        if relation.status == "staged":
            raise staged_error(relation)
        found = self.reader.table_version(relation, travel)
        at = replace(relation, location=found.location, delta_version=found.version)
        # ALTER TABLE changes a managed Delta table's columns: a past version is read with
        # the columns its log had then, not the catalog's current ones.
        past = is_managed_delta(relation) and found.version != relation.delta_version
        return self._read_once(
            (*ident.key, f"@{found.version}"),
            relation,
            lambda alias: (
                replace(self._table_plan(alias, at), physical_schema="", columns=())
                if past
                else self._table_plan(alias, at)
            ),
        )

    def _delta_version(
        self, relation: Relation, travel: TimeTravel
    ) -> tuple[str, ObjectIdentifier]:
        """A version of an external Delta table: its path read by Delta's reader at that
        version (its log is the truth; a version it lacks is the engine's answer)."""
        ident = relation.identifier
        self._require_files_of(relation)
        if relation.status == "staged":
            raise staged_error(relation)
        option = time_travel.delta_reader_option(travel)
        return self._read_once(
            (*ident.key, "@" + "=".join(next(iter(option.items())))),
            relation,
            lambda alias: replace(self._table_plan(alias, relation), time_travel=option),
        )

    def changes(
        self, changes: ChangeRange, catalog: str | None, database: str | None
    ) -> tuple[str, ObjectIdentifier]:
        """``table_changes('name', start [, end])``: the change data feed of a managed Delta
        table the user may SELECT between two recorded versions (``table_changes``)."""
        ident = expand_path(changes.parts, catalog, database)
        relation = self.reader.get_relation(ident)
        if relation is None:
            raise self._not_found(f"Table or view {ident.quoted()} not found", ident)
        self._require(relation, Privilege.SELECT, ident)
        start, end = change_feeds.feed_range(self.reader, relation, changes, self.context)
        return self._read_once(
            (*relation.identifier.key, f"@changes={start}-{end}"),
            relation,
            lambda alias: change_feeds.feed_plan(self._table_plan(alias, relation), start, end),
        )

    def _read_once(
        self, key: tuple[str, ...], relation: Relation, plan_of: Callable[[str], RelationPlan]
    ) -> tuple[str, ObjectIdentifier]:
        """The alias of what ``key`` reads of ``relation`` (a version, a change feed),
        registered on first use with the plan ``plan_of(alias)``."""
        known = self._relation_aliases.get(key)
        if known is not None:
            return known
        alias = RELATION_ALIAS.format(len(self.relations) + 1)
        self.relations.append(plan_of(alias))
        self.objects.append(relation)
        self._relation_aliases[key] = (alias, relation.identifier)
        return alias, relation.identifier

    # -- privileges -----------------------------------------------------------------------

    def definer(self) -> Definer | None:
        """Whose rights count now: the owner of the innermost permanent view or SQL function
        being expanded; None at the statement's own level (the invoker)."""
        return self._definers[-1] if self._definers else None

    @contextmanager
    def _inside(self, obj: Relation | FunctionDef) -> Iterator[None]:
        """While the references inside ``obj`` are resolved, with its owner's rights."""
        self._definers.append(self.authorizer.definer_inside(obj, self.definer()))
        try:
            yield
        finally:
            self._definers.pop()

    def _require_files_of(self, relation: Relation) -> None:
        """A session's temporary table over files reads them with its user's rights now: READ
        FILES on their root is decided again at each statement (a revoke counts from the
        next one), not only when the table was declared. Uploads, DataFrames and the rate
        connector read no one's files; permanent tables are read with SELECT on them."""
        if not relation.temporary or relation.kind != "table" or "path" not in relation.options:
            return
        named = {str(relation.options.get(k, "")).strip().lower() for k in ("connector", "format")}
        if named & _READS_NO_FILES:
            return
        self.authorizer.require_files(relation.options["path"], self.context.storage_roots)
        # Another table's files are read only with SELECT on it, as of now.
        conflict = self.reader.read_conflict(relation)
        if conflict is not None:
            raise ForbiddenSql(
                f"Temporary table {relation.identifier.quoted()} cannot be read. {conflict}",
                details={"identifier": list(relation.identifier.parts)},
            )

    def _require(
        self, obj: Relation | FunctionDef, needed: Privilege, ident: ObjectIdentifier
    ) -> None:
        """``needed`` on a referenced object, for whoever's rights count; hidden answers as
        the missing name (naming the view that reads it, if any)."""
        kind, what = (
            ("function", "Function")
            if isinstance(obj, FunctionDef)
            else ("relation", "Table or view")
        )
        self.authorizer.require(
            obj,
            needed,
            missing=lambda: self._not_found(f"{what} {ident.quoted()} not found", ident, kind),
            definer=self.definer(),
        )

    @contextmanager
    def _expanding_object(self, kind: str, ident: ObjectIdentifier) -> Iterator[None]:
        """While a view's query or a function's body is being resolved."""
        self._expanding.append((kind, ident))
        try:
            yield
        finally:
            self._expanding.pop()

    def _check_cycle(self, kind: str, ident: ObjectIdentifier) -> None:
        chain = [i for k, i in self._expanding if k == kind]
        if ident in chain:
            path = " → ".join(display(i) for i in [*chain[chain.index(ident) :], ident])
            what = "view" if kind == "view" else "function"
            raise CoreError(
                f"Recursive {what} {display(ident)} detected: {path}.",
                details={"identifier": list(ident.parts)},
            )

    def _not_found(self, message: str, ident: ObjectIdentifier, kind: str = "relation") -> NotFound:
        """NOT_FOUND for a missing object, naming the view that reads it, if any."""
        details: dict[str, Any] = {"identifier": list(ident.parts)}
        views = [i for k, i in self._expanding if k == "view"]
        if views:
            message = f"{message} (read by view {views[-1].quoted()})."
            details["view"] = list(views[-1].parts)
        return missing_object(kind, message, details=details)

    def _view_sql(self, view: Relation) -> str:
        ident = view.identifier
        tokens, end = _single_statement(view.query, f"view {ident.quoted()}")
        try:
            return self.rewrite_query(view.query, tokens, ident.catalog, ident.database, end).sql
        except ParseError as error:
            raise ParseError(
                f"The stored query of view {ident.quoted()} cannot be parsed: {error.message}",
                line=error.details["line"],
                column=error.details["column"],
            ) from None

    def _table_plan(self, alias: str, table: Relation) -> RelationPlan:
        context = self.context
        return table_plan(
            alias, table, context.storage_roots, context.uploads, context.pipeline_job
        )

    # -- functions ----------------------------------------------------------------------

    def function(
        self, parts: Sequence[str], catalog: str | None, database: str | None
    ) -> tuple[str, ObjectIdentifier] | None:
        """The alias of a function, or None for a Spark built-in.

        One-part names: the session's temporary system function, then the built-in, then
        the catalog function in ``catalog``.``database`` (the reader returns a temporary
        catalog function first); qualified names: the catalog function only.
        """
        if len(parts) == 1:
            system = self.system_function(parts[0])
            if system is not None:
                return system
            if is_builtin(parts[0]):
                return None
        ident = expand_path(parts, catalog, database)
        known = self._function_aliases.get(ident.key)
        if known is not None:
            self._require(self._registered[("function", *ident.key)], Privilege.EXECUTE, ident)
            return known
        self._check_cycle("function", ident)
        function = self.reader.get_function(ident)
        if function is None:
            raise self._not_found(f"Function {ident.quoted()} not found", ident, "function")
        self._require(function, Privilege.EXECUTE, ident)
        return self._register_function(function, function.identifier, system=False)

    def system_function(self, name: str) -> tuple[str, ObjectIdentifier] | None:
        """The alias of the session's temporary system function ``name``, if there is one."""
        ident = system_identifier(name)
        known = self._function_aliases.get(ident.key)
        if known is not None:
            return known
        self._check_cycle("function", ident)
        if ident.key in self._not_system:
            return None
        function = self.reader.get_system_function(name)
        if function is None:
            self._not_system.add(ident.key)
            return None
        return self._register_function(
            function, system_identifier(function.identifier.name or name), system=True
        )

    def _register_function(
        self, function: FunctionDef, ident: ObjectIdentifier, *, system: bool
    ) -> tuple[str, ObjectIdentifier]:
        guard.check_function_name(ident.parts)
        if function.language == "python":
            implementation = guard.check_udf_implementation(
                function.implementation, self.context.udf_packages
            )
            body = ""
        else:
            implementation = ""
            with self._inside(function):
                body = self.function_body(
                    function.implementation, ident, function.implementation, 0
                )
        alias = FUNCTION_ALIAS.format(len(self.functions) + 1)
        self.functions.append(
            FunctionPlan(
                alias,
                ident.parts,
                function.language,
                implementation=implementation,
                parameters=tuple(function.parameters),
                return_type=function.return_type,
                body=body,
                temporary=function.temporary or system,
                system=system,
            )
        )
        self.objects.append(function)
        self._function_aliases[ident.key] = (alias, ident)
        self._registered[("function", *ident.key)] = function
        return alias, ident

    def function_body(self, body: str, ident: ObjectIdentifier, origin: str, offset: int) -> str:
        """Rewrite the SQL body of function ``ident`` (also while it is being created): it
        is resolved where the function lives (a system function: in the session's current
        catalog and database); a call of the function itself is recursive. Bodies cannot
        read tables: the worker registers functions before relations."""
        source, refs = analyze_expression(body, origin, offset)
        if refs.tables:
            shown = quote_path(refs.tables[0].parts)
            raise CoreError(
                f"The body of function {display(ident)} reads {shown}: SQL functions cannot "
                "read tables or views."
            )
        if is_system(ident):
            catalog, database = self.context.current_catalog, self.context.current_database
        else:
            catalog, database = ident.catalog, ident.database
        with self._expanding_object("function", ident):
            rewritten = self._rewrite(
                source, len(EXPRESSION_PREFIX), len(source), refs, catalog, database
            )
        return rewritten.sql

    def reads(self, ident: ObjectIdentifier) -> bool:
        """Whether the statement reads this relation (directly or through views)."""
        return ident.key in self._relation_aliases

    def temporary_objects(self) -> list[str]:
        """The temporary objects read (directly or through views and functions)."""
        return [
            display(o.identifier)
            for o in self.objects
            if o.temporary or (isinstance(o, FunctionDef) and o.system)
        ]
