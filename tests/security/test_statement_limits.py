"""Statements cannot stall the web process (docs/security.md §4).

A statement longer than ``TESSERA_SQL_MAX_CHARS``, with more than ``TESSERA_SQL_MAX_TOKENS``
tokens or nested deeper than ``TESSERA_SQL_MAX_DEPTH`` is refused before it is planned —
4xx in the contract's shape, and no job. Planning runs under a time budget, and takes one of
the user's planning slots in the process (``429 TOO_MANY_REQUESTS`` when there is none).

"Planned" below means the planner went all the way to resolving names: those statements read
a table that does not exist, so their job fails with NOT_FOUND and nothing runs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from rest_framework.test import APIClient
from sqlglot.parser import Parser
from sqlglot.tokens import Tokenizer

import core.limits
from core.limits import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_TOKENS,
    BudgetedReader,
    PlanningTimeout,
    StatementLimits,
    StatementSize,
    StatementTooDeep,
    accept_statement,
    check_statement,
    planning_budget,
)
from core.planner import PlanContext, Relation, plan_statement
from core.privileges import Access, Kind, Securable
from jobs.models import Job
from sessions import planning, scripts, statements
from tests.conftest import API, assert_error

# sqlglot's own entry points, called through by the spies of ``Console.refused``.
TOKENIZE = Tokenizer.tokenize
PARSE = Parser.parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(alice_api: APIClient, make: Any) -> Console:
    make.catalog("demo")
    return Console(alice_api)


class Console:
    def __init__(self, client: APIClient) -> None:
        self.client = client
        response = client.post(f"{API}/sessions", {"current_catalog": "demo"})
        assert response.status_code == 201, response.content
        self.id = response.json()["id"]

    def post(self, sql: str, **extra: Any) -> Any:
        return self.client.post(f"{API}/sessions/{self.id}/statements", {"sql": sql, **extra})

    def refused(
        self, sql: str, status: int, code: str, *fragments: str, unread: bool = False, **extra: Any
    ) -> Any:
        """A 4xx in the contract's shape, and no job made. ``unread``: refused before
        planning, from a scan of the text alone (sqlglot neither tokenized nor parsed it)."""
        jobs = Job.objects.count()
        with (
            mock.patch.object(Tokenizer, "tokenize", autospec=True, side_effect=TOKENIZE) as lexed,
            mock.patch.object(Parser, "parse", autospec=True, side_effect=PARSE) as parsed,
        ):
            error = assert_error(self.post(sql, **extra), status, code, *fragments)
        assert Job.objects.count() == jobs, "a refused statement made a job"
        if unread:
            assert lexed.call_count == 0 and parsed.call_count == 0, "planned before refusing"
        return error

    def planned(self, sql: str, code: str = "NOT_FOUND") -> dict[str, Any]:
        """Accepted and planned: a job that failed as planning ends for it (never a 500)."""
        response = self.post(sql)
        assert response.status_code == 201, response.content[:500]
        job = response.json()
        assert job["status"] == "FAILED", job
        assert job["error"]["code"] == code, job["error"]
        return dict(job)


def tokens(sql: str) -> int:
    huge = StatementLimits(max_chars=10**9, max_tokens=10**9, max_depth=10**6)
    return check_statement(sql, huge).tokens


# --- size -------------------------------------------------------------------------------------

MISSING = "SELECT * FROM missing_table WHERE name = "


def _padded(size: int, pad: Callable[[int], str]) -> str:
    body = MISSING + "'x'"
    return body + pad(size - len(body))


PADDINGS: dict[str, Callable[[int], str]] = {
    "comment": lambda n: " --" + "c" * (n - 3),
    "block comment": lambda n: " /*" + "c" * (n - 5) + "*/",
    "spaces": lambda n: " " * n,
    "newlines": lambda n: "\n" * n,
    "string": lambda n: " AND name = '" + "s" * (n - 14) + "'",
}


@pytest.mark.parametrize("padding", list(PADDINGS))
@pytest.mark.parametrize("size", [MAX_CHARS + 1, 2 * 1024 * 1024])
def test_statements_over_the_size_limit_are_413(
    console: Console, settings: Any, padding: str, size: int
) -> None:
    sql = _padded(size, PADDINGS[padding])
    assert len(sql) == size
    if len(json.dumps({"sql": sql})) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        # 2 MiB of newlines are 4 MiB of JSON ("\n"): the body limit answers first.
        console.refused(sql, 413, "PAYLOAD_TOO_LARGE")
        return
    error = console.refused(sql, 413, "STATEMENT_TOO_LARGE", "characters", unread=True)
    assert error["details"] == {
        "field": "sql",
        "limit": "characters",
        "maximum": MAX_CHARS,
        "found": size,
    }
    console.refused(sql, 413, "STATEMENT_TOO_LARGE", script=True)


def test_a_statement_at_the_size_limit_is_planned(console: Console) -> None:
    for padding in ("string", "comment"):
        sql = _padded(MAX_CHARS, PADDINGS[padding])
        assert len(sql) == MAX_CHARS
        console.planned(sql)


# --- tokens ------------------------------------------------------------------------------------


def _in_list(count: int) -> str:
    """A statement of exactly ``count`` tokens (an IN list reading a missing table)."""
    head = "SELECT * FROM missing_table WHERE id IN ("  # 8 tokens, then 2 per value
    sql = head + ",".join(str(i) for i in range((count - 8) // 2)) + ")"
    if tokens(sql) < count:
        sql = sql.replace("WHERE id", "WHERE +id", 1)
    assert tokens(sql) == count
    return sql


TOKEN_SHAPES: dict[str, Callable[[int], str]] = {
    "numbers": lambda n: "SELECT 1 FROM missing_table WHERE x IN (" + ",1" * n + ")",
    "names": lambda n: "SELECT " + ", ".join(["c"] * n) + " FROM missing_table",
    "strings": lambda n: "SELECT " + " || ".join(["'s'"] * n) + " FROM missing_table",
    "symbols": lambda n: "SELECT 1" + " + 1" * n + " FROM missing_table",
}


@pytest.mark.parametrize("shape", list(TOKEN_SHAPES))
def test_statements_over_the_token_limit_are_413(console: Console, shape: str) -> None:
    sql = TOKEN_SHAPES[shape](MAX_TOKENS)
    assert tokens(sql) > MAX_TOKENS
    error = console.refused(sql, 413, "STATEMENT_TOO_LARGE", "tokens", unread=True)
    assert error["details"] == {"field": "sql", "limit": "tokens", "maximum": MAX_TOKENS}


def test_a_statement_at_the_token_limit_is_planned(console: Console) -> None:
    console.planned(_in_list(MAX_TOKENS))
    console.refused(_in_list(MAX_TOKENS + 1), 413, "STATEMENT_TOO_LARGE", "tokens")


# --- nesting depth ----------------------------------------------------------------------------

NESTINGS: dict[str, Callable[[int], str]] = {
    "parentheses": lambda n: "SELECT " + "(" * n + "1" + ")" * n + " FROM missing_table",
    "calls": lambda n: "SELECT " + "abs(" * n + "1" + ")" * n + " FROM missing_table",
    "scalar subqueries": lambda n: (
        "SELECT " + "(SELECT " * n + "1" + ")" * n + " FROM missing_table"
    ),
    "subqueries in FROM": lambda n: (
        "SELECT * FROM " + "(SELECT * FROM " * n + "missing_table" + ") t" * n
    ),
    "CASE": lambda n: (
        "SELECT " + "CASE WHEN true THEN " * n + "1" + " END" * n + " FROM missing_table"
    ),
    "lambdas": lambda n: (
        "SELECT " + "transform(a, x -> " * n + "x" + ")" * n + " FROM missing_table"
    ),
    "brackets": lambda n: "SELECT a" + "[a" * (n - 1) + "[0" + "]" * n + " FROM missing_table",
    "IN subqueries": lambda n: (
        "SELECT 1 FROM missing_table WHERE 1 IN "
        + "(SELECT 1 FROM missing_table WHERE 1 IN " * (n - 1)
        + "(1)"
        + ")" * (n - 1)
    ),
    "CTEs in CTEs": lambda n: (
        "WITH a AS (" * n
        + "SELECT 1"
        + ") SELECT * FROM a" * (n - 1)
        + ") SELECT * FROM missing_table"
    ),
}


@pytest.mark.parametrize("shape", list(NESTINGS))
def test_statements_nested_past_the_limit_are_400(console: Console, shape: str) -> None:
    for depth in (MAX_DEPTH + 1, 60, 10_000):
        sql = NESTINGS[shape](depth)
        error = console.refused(
            sql, 400, "STATEMENT_TOO_DEEP", f"more than {MAX_DEPTH}", unread=True
        )
        assert error["details"]["limit"] == "depth"
        assert error["details"]["maximum"] == MAX_DEPTH
        assert error["details"]["line"] == 1 and error["details"]["column"] > 1


@pytest.mark.parametrize("shape", list(NESTINGS))
def test_statements_at_the_depth_limit_are_planned(console: Console, shape: str) -> None:
    """The margin: at the limit, the deepest constructs plan (no RecursionError) even from
    the test client's stack, deeper than a gunicorn request's."""
    sql = NESTINGS[shape](MAX_DEPTH)
    assert check_statement(sql, StatementLimits()).depth == MAX_DEPTH
    console.planned(sql)


def test_nesting_inside_strings_and_comments_does_not_count(console: Console) -> None:
    console.planned("SELECT '" + "(" * 5000 + "' FROM missing_table")
    console.planned("SELECT `" + "(" * 500 + "` FROM missing_table")
    console.planned("SELECT 1 /* " + "( /* ( */ " * 500 + " */ FROM missing_table")
    console.planned("SELECT 1 -- " + "(" * 5000 + "\nFROM missing_table")


def test_what_the_scan_does_not_count_still_ends_in_a_clear_error(console: Console) -> None:
    """NOT NOT … and unary minus chains recurse in sqlglot without parentheses: past the
    interpreter's stack they end as STATEMENT_TOO_DEEP jobs, never INTERNAL_ERROR."""
    job = console.planned(
        "SELECT " + "NOT " * 2000 + "true FROM missing_table", code="STATEMENT_TOO_DEEP"
    )
    assert "nested too deeply" in job["error"]["message"]
    for sql in ("SELECT " + "- " * 3000 + "1 FROM missing_table", "SELECT " + "~" * 3000 + "1"):
        response = console.post(sql)
        assert response.status_code == 201
        assert response.json()["error"]["code"] in (
            "NOT_FOUND",
            "PARSE_ERROR",
            "STATEMENT_TOO_DEEP",
        )


# --- scripts -------------------------------------------------------------------------------------


def test_scripts_are_limited_as_a_whole(console: Console, settings: Any) -> None:
    settings.TESSERA_SCRIPT_MAX_STATEMENTS = 20
    error = console.refused(
        "SHOW CATALOGS;" * 21, 413, "STATEMENT_TOO_LARGE", "21 statements", script=True
    )
    assert error["details"] == {"field": "sql", "limit": "statements", "maximum": 20}
    # Tokens count over the whole script, though each statement is small.
    small = "SELECT 1 FROM missing_table WHERE x IN (" + ",1" * 200 + ");"
    console.refused(small * 130, 413, "STATEMENT_TOO_LARGE", "tokens", script=True)
    console.refused(
        "SHOW CATALOGS; " + NESTINGS["parentheses"](MAX_DEPTH + 1),
        400,
        "STATEMENT_TOO_DEEP",
        script=True,
    )
    response = console.post("SHOW CATALOGS;" * 20, script=True)
    assert response.status_code == 201 and len(response.json()["jobs"]) == 20


# --- one scan per statement ------------------------------------------------------------------


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``check_statement`` scans (the real function runs), wherever it is called."""
    seen: list[str] = []

    def spy(text: str, limits: StatementLimits, **kwargs: Any) -> StatementSize:
        seen.append(text)
        return check_statement(text, limits, **kwargs)

    monkeypatch.setattr(core.limits, "check_statement", spy)
    monkeypatch.setattr(statements, "check_statement", spy)
    monkeypatch.setattr(scripts, "check_statement", spy)
    return seen


def test_a_statement_is_scanned_for_its_limits_once(console: Console, scans: list[str]) -> None:
    sql = _in_list(1000)
    console.planned(sql)
    assert scans == [sql]
    scans.clear()
    deep = NESTINGS["parentheses"](MAX_DEPTH + 1)
    console.refused(deep, 400, "STATEMENT_TOO_DEEP")
    assert scans == [deep]


def test_a_script_is_scanned_whole_then_each_statement_when_it_is_planned(
    console: Console, scans: list[str]
) -> None:
    """A script's statements are planned one by one when their turn comes (maybe in another
    process, later): the planner checks each then, under the limits in force."""
    script = "SHOW CATALOGS; SELECT * FROM missing_table"
    response = console.post(script, script=True)
    assert response.status_code == 201
    assert scans == [script, "SHOW CATALOGS", "SELECT * FROM missing_table"]


def test_the_planner_alone_still_checks_the_limits(scans: list[str]) -> None:
    """Called directly (tests, the bench, any other caller), the planner scans what it is not
    handed checked under its own limits."""
    deep = NESTINGS["CASE"](MAX_DEPTH + 1)
    context = PlanContext("demo", "default")
    with pytest.raises(StatementTooDeep):
        plan_statement(deep, SlowReader(), context)
    # Checked under looser limits than the planner's: scanned again, and refused.
    loose = accept_statement(deep, StatementLimits(max_depth=1000))
    with pytest.raises(StatementTooDeep):
        plan_statement(loose, SlowReader(), context)
    assert scans == [deep, deep, deep]
    # Checked under the planner's own limits: planned without another scan.
    scans.clear()
    checked = accept_statement("SELECT * FROM t0", context.limits)
    assert len(plan_statement(checked, SlowReader(), context).relations) == 1
    assert scans == ["SELECT * FROM t0"]


# --- the planning budget ------------------------------------------------------------------


def test_planning_stops_at_its_budget(console: Console, settings: Any) -> None:
    settings.TESSERA_PLANNING_BUDGET_SECONDS = 0.2
    sql = _in_list(MAX_TOKENS)  # planning it takes about a second
    # Stopped by the budget: planned to the end, it would be accepted (below).
    job = console.planned(sql, code="PLANNING_TIMEOUT")
    assert "longer than the server allows (0.2 s)" in job["error"]["message"]
    assert job["error"]["details"] == {"budget_seconds": 0.2}
    settings.TESSERA_PLANNING_BUDGET_SECONDS = 0  # none: the same statement plans
    console.planned(sql)


def test_many_chained_ctes_plan_in_linear_time() -> None:
    """A regression test of the quadratic CTE scopes: 8,000 chained CTEs (a quarter of a
    megabyte, past the server's limits, so planned here without them) took 47 s; linear,
    about 4 s. 20 s is the line between the two."""
    n = 8000
    sql = (
        "WITH a0 AS (SELECT 1 AS x), "
        + ", ".join(f"a{i} AS (SELECT * FROM a{i - 1})" for i in range(1, n))
        + f" SELECT * FROM a{n - 1}"
    )
    unlimited = StatementLimits(max_chars=10**9, max_tokens=10**9, max_depth=10**6)
    context = PlanContext("demo", "default", limits=unlimited, budget_seconds=20)
    plan = plan_statement(sql, SlowReader(), context)
    assert plan.relations == ()  # every name was a CTE


class SlowReader:
    """A catalog far away: every lookup takes 20 ms; every table exists (a parquet table
    without columns, as the real reader returns it: with its securable), nothing else does.
    Its user is an admin: privileges are not what these tests are about."""

    def __init__(self) -> None:
        self.lookups = 0

    def access(self, principal: int | None = None) -> Access:
        return Access(1, admin=True)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def lookup(*args: Any) -> Any:
            self.lookups += 1
            time.sleep(0.02)
            if name == "get_relation":
                ident = args[0]
                securable = Securable(Kind.TABLE, 1, 1, self.lookups, path=ident.parts)
                return Relation(
                    ident,
                    "table",
                    "active",
                    {"format": "parquet"},
                    "/w/t",
                    None,
                    securable=securable,
                )
            return None if name.startswith("get_") else True

        return lookup


def test_the_budget_bounds_catalog_lookups_too() -> None:
    """2,000 tables are 2,000 lookups (40 s here); the budget stops them."""
    sql = "SELECT * FROM " + ", ".join(f"t{i}" for i in range(2000))
    context = PlanContext("demo", "default", storage_roots=("/w",), budget_seconds=0.3)
    reader = SlowReader()
    with pytest.raises(PlanningTimeout):
        plan_statement(sql, reader, context)
    assert reader.lookups < 200  # stopped far before the 2,000th lookup (0.3 s of 20 ms)
    few = "SELECT * FROM " + ", ".join(f"t{i}" for i in range(5))
    plan = plan_statement(few, SlowReader(), context)
    assert len(plan.relations) == 5


def test_budgets_nest_without_extending() -> None:
    with planning_budget(0.05), planning_budget(60):
        time.sleep(0.1)
        reader = BudgetedReader(SlowReader())
        with pytest.raises(PlanningTimeout):
            reader.catalog_exists("demo")


# --- planning slots -----------------------------------------------------------------------------


def test_a_user_planning_in_this_process_gets_429_others_do_not(
    console: Console, alice: Any, bob_api: APIClient, settings: Any
) -> None:
    settings.TESSERA_PLANNING_PER_USER = 1
    settings.TESSERA_PLANNING_WAIT_SECONDS = 0  # refused at once (waiting: test_planning_gate)
    with planning.GATE.slot(alice.pk):  # as if a statement of alice's were being planned
        error = console.refused("SHOW CATALOGS", 429, "TOO_MANY_REQUESTS", "already")
        assert error["details"]["limit"] == "planning_per_user"
        response = console.post("SHOW CATALOGS")
        assert response["Retry-After"] == "1"
        console.refused("SHOW CATALOGS", 429, "TOO_MANY_REQUESTS", script=True)
        bob = bob_api.post(f"{API}/sessions", {}).json()["id"]
        answer = bob_api.post(f"{API}/sessions/{bob}/statements", {"sql": "SHOW CATALOGS"})
        assert answer.status_code == 201 and answer.json()["status"] == "FINISHED"
    assert console.post("SHOW CATALOGS").json()["status"] == "FINISHED"
    assert planning.GATE.in_use() == 0


def test_the_process_keeps_threads_for_everyone_else(console: Console, settings: Any) -> None:
    settings.TESSERA_PLANNING_PER_PROCESS = 2
    settings.TESSERA_PLANNING_WAIT_SECONDS = 0
    with planning.GATE.slot("someone"), planning.GATE.slot("someone else"):
        error = console.refused("SHOW CATALOGS", 429, "TOO_MANY_REQUESTS", "in a moment")
        assert error["details"] == {
            "limit": "planning_per_process",
            "maximum": 2,
            "retry_after": 1,
        }
        # Requests that plan nothing are not held back.
        assert console.client.get(f"{API}/catalogs").status_code == 200
    assert console.post("SHOW CATALOGS").status_code == 201


def test_a_refused_or_failed_planning_gives_its_slot_back(console: Console, alice: Any) -> None:
    console.refused(NESTINGS["parentheses"](MAX_DEPTH + 1), 400, "STATEMENT_TOO_DEEP")
    console.planned("SELECT * FROM missing_table")
    console.planned("SELECT (", code="PARSE_ERROR")
    assert planning.GATE.in_use(alice.pk) == 0


# --- view queries made through REST ----------------------------------------------------------


def test_view_queries_made_through_rest_are_held_to_the_same_limits(
    console: Console, make: Any, analyzer: Any
) -> None:
    """A view's query is planned with every statement that reads it: REST may not store one
    SQL's CREATE VIEW would refuse."""
    views = f"{API}/catalogs/demo/databases/default/views"
    client = console.client
    for query, status, code in [
        (_padded(MAX_CHARS + 1, PADDINGS["string"]), 413, "STATEMENT_TOO_LARGE"),
        (_in_list(MAX_TOKENS + 1), 413, "STATEMENT_TOO_LARGE"),
        (NESTINGS["parentheses"](MAX_DEPTH + 1), 400, "STATEMENT_TOO_DEEP"),
    ]:
        error = assert_error(client.post(views, {"name": "v", "query": query}), status, code)
        assert error["details"]["field"] == "query"
        assert client.get(f"{views}/v").status_code == 404  # nothing was stored
    make.view("demo", "default", "v")
    response = client.patch(f"{views}/v", {"query": NESTINGS["CASE"](MAX_DEPTH + 1)})
    assert_error(response, 400, "STATEMENT_TOO_DEEP", "view query")
    assert client.get(f"{views}/v").json()["query"] == "SELECT 1 AS one"
