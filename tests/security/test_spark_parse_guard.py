"""The guard judges Spark's own parse (issue 10, part 1), end to end on a real worker.

Every attack goes through ``POST /sessions/{id}/statements`` as an ordinary user, or — to
show the worker's check stands on its own — as a hand-made plan that never met the planner.
Each test asserts the job was refused AND that nothing ran: no marker file from a script, no
directory written, no rows, no secret in any answer.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.conf import settings
from rest_framework.test import APIClient

from tests.conftest import API
from tests.worker_helpers import (
    api_for,
    create_user,
    hand_plan,
    open_session,
    result_rows,
    statement,
    submit_plan,
    wait_for_status,
    wait_job,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("security_worker"),
]

# Text the planner's tokenizer reads as a harmless string but Spark's lexer as code: a `--`
# comment ending in a backslash continues onto the next line for Spark only (the issue's
# reproduction), in several spellings; plus hints, whose parameters Spark parses as
# expressions while sqlglot keeps the hint as one opaque token.
STATEMENT_TRICKS = {
    "comment_backslash": "-- \\\nSELECT '\n{stmt} -- '",
    "comment_backslash_after_code": "SELECT 1 AS one -- note \\\n, '\n{stmt} -- '",
}
EXPRESSION_TRICKS = {
    "comment_backslash": "SELECT 1 AS a, -- \\\n'\n{expr} -- '\nAS s",
    "comment_backslash_tabs": "SELECT 1 AS a,\t--\t\\\n'\n{expr}\t-- '\nAS s",
    "comment_backslash_crlf_after": "SELECT 1 AS a, -- \\\n'\r\n{expr} -- '\r\nAS s",
    "hint_parameter": "SELECT /*+ REPARTITION({expr}) */ * FROM orders",
    # Spark 4 dollar-quoted strings: one string to Spark, a quote and code to sqlglot.
    "dollar_quoted": "SELECT $$ ' $$ AS a, {expr} -- '\nAS s",
}
# Spellings both lexers read alike: the planner sees the payload and refuses it itself.
VISIBLE_TRICKS = {
    "overlapping_comment_close": "SELECT 1 AS a, /*/ ' */ {expr} -- '\nAS s",
    "raw_string": "SELECT r'\\' AS a, {expr} -- '\nAS s",
    "escaped_quote": "SELECT 'a\\' AS a, {expr} -- ' AS s",
    "doubled_quote": "SELECT 'a'' AS a, {expr} -- ' AS s",
    "double_quoted": 'SELECT "a\\" AS a, {expr} -- " AS s',
    "nested_comment": "SELECT 1 AS a /* x /* y */ ' */, {expr} -- '\nAS s",
    "cr_line_end": "SELECT 1 AS a -- c\r, {expr} AS s",
    "upper_case": "SELECT {upper}",
    "newline_before_paren": "SELECT {newline}",
    "comment_before_paren": "SELECT {commented}",
}


class User:
    """An ordinary user with a token client, a SQL session and one table of their own."""

    def __init__(self, name: str, tmp: Path) -> None:
        self.user = create_user(name)
        self.client: APIClient = api_for(self.user)
        self.tmp = tmp
        catalog = f"cat_{uuid.uuid4().hex[:8]}"
        root = Path(settings.TESSERA_STORAGE_ROOTS[0]) / catalog / "orders"
        root.mkdir(parents=True)
        pq.write_table(pa.table({"id": [1, 2, 3], "qty": [10, 20, 30]}), root / "part-0.parquet")
        for url, body in (
            (f"{API}/catalogs", {"name": catalog}),
            (
                f"{API}/catalogs/{catalog}/databases/default/tables",
                {
                    "name": "orders",
                    "schema": {
                        "columns": [
                            {"name": "id", "kind": "physical", "data_type": "BIGINT"},
                            {"name": "qty", "kind": "physical", "data_type": "BIGINT"},
                        ]
                    },
                    "options": {"connector": "parquet", "path": str(root)},
                },
            ),
        ):
            response = self.client.post(url, body)
            assert response.status_code == 201, response.content
        self.session = open_session(self.client)
        response = self.client.patch(f"{API}/sessions/{self.session}", {"current_catalog": catalog})
        assert response.status_code == 200, response.content

    def run(self, sql: str) -> dict[str, Any]:
        job = statement(self.client, self.session, sql, wait=30)
        return wait_job(self.client, job["id"], timeout=90)


@pytest.fixture
def attacker(tmp_path: Path) -> User:
    return User(f"mallory_{uuid.uuid4().hex[:6]}", tmp_path)


def refused(job: dict[str, Any], *, by_worker: bool | None = None) -> dict[str, Any]:
    """The job failed with a refusal; ``by_worker``: the worker's check refused it (the planner
    had let it through), or the planner did. Returns the error."""
    assert job["status"] == "FAILED", job
    error = job["error"]
    assert error["code"] in ("FORBIDDEN_SQL", "PARSE_ERROR", "NOT_FOUND", "VALIDATION_ERROR"), error
    assert job["result"] is None
    checked_by = (error.get("details") or {}).get("checked_by")
    if by_worker is True:
        assert error["code"] == "FORBIDDEN_SQL", error
        assert checked_by in ("spark_lexer", "spark_parser"), error
    if by_worker is False:
        assert checked_by is None, error
    assert "__tessera_" not in error["message"], error
    return dict(error)


def failure(job: Any) -> dict[str, Any]:
    """A failed job row's error (the job model's ``error`` is optional)."""
    assert job.error is not None, job.status
    return dict(job.error)


def no_secrets(value: Any) -> None:
    text = repr(value)
    for secret in ("root:x:0:0", str(Path.home()), os.environ.get("DATABASE_URL", "@@")):
        assert secret not in text, value


# -- the attacks, through the planner ---------------------------------------------


def _payloads(tmp: Path) -> dict[str, tuple[str, Path | None]]:
    """Statement payloads, each with the path that must NOT exist afterwards (if any)."""
    marker = tmp / f"ran-{uuid.uuid4().hex[:6]}"
    out = tmp / f"out-{uuid.uuid4().hex[:6]}"
    return {
        "read_file": ("SELECT * FROM text.`/etc/passwd`", None),
        "insert_overwrite_directory": (
            f'INSERT OVERWRITE DIRECTORY "{out}" USING parquet SELECT 1 AS x',
            out,
        ),
        "script_transform": (f'SELECT TRANSFORM(1) USING "touch {marker}"', marker),
        "java_method_getenv": (
            'SELECT java_method("java.lang.System", "getenv", "HOME") AS h',
            None,
        ),
        "cache_table": ("CACHE TABLE t AS SELECT 1", None),
        "add_jar": (f'ADD JAR "{tmp}/x.jar"', None),
        "set_conf": ("SET spark.sql.variable.substitute = true", None),
    }


@pytest.mark.parametrize("trick", sorted(STATEMENT_TRICKS))
@pytest.mark.parametrize(
    "payload",
    [
        "read_file",
        "insert_overwrite_directory",
        "script_transform",
        "java_method_getenv",
        "cache_table",
        "add_jar",
        "set_conf",
    ],
)
def test_statements_hidden_from_the_planner_are_refused(
    attacker: User, tmp_path: Path, trick: str, payload: str
) -> None:
    text, must_not_exist = _payloads(tmp_path)[payload]
    job = attacker.run(STATEMENT_TRICKS[trick].format(stmt=text))
    error = refused(job, by_worker=True)
    assert error["details"]["checked_by"] == "spark_lexer"
    assert "read this statement differently" in error["message"]
    assert "line" in error["details"]
    if must_not_exist is not None:
        assert not must_not_exist.exists()
    no_secrets(job)


EXPRESSIONS = {
    "read_file": "(SELECT max(value) FROM text.`/etc/passwd`)",
    "java_method": 'java_method("java.lang.System", "getenv", "HOME")',
    "reflect": 'reflect("java.lang.System", "getenv", "HOME")',
    "try_reflect": 'try_reflect("java.lang.System", "getenv", "HOME")',
    "qualified_reflect": 'system.builtin.reflect("java.lang.System", "getenv", "HOME")',
    "identifier_call": 'IDENTIFIER("java_method")("java.lang.System", "getenv", "HOME")',
}


@pytest.mark.parametrize("trick", sorted(EXPRESSION_TRICKS))
@pytest.mark.parametrize("payload", sorted(EXPRESSIONS))
def test_expressions_hidden_from_the_planner_are_refused(
    attacker: User, trick: str, payload: str
) -> None:
    job = attacker.run(EXPRESSION_TRICKS[trick].format(expr=EXPRESSIONS[payload]))
    refused(job)  # the planner may already see some (a file path inside a hint, …)
    no_secrets(job)


def test_a_function_call_inside_a_hint_is_judged_by_spark(attacker: User) -> None:
    """Found while building the guard: sqlglot keeps a hint as one token, so the planner never
    saw a call in a hint's parameters; Spark parses them as expressions and evaluates them."""
    job = attacker.run(EXPRESSION_TRICKS["hint_parameter"].format(expr=EXPRESSIONS["java_method"]))
    error = refused(job, by_worker=True)
    assert error["details"] == {
        "checked_by": "spark_parser",
        "function": ["java_method"],
    }
    assert "java_method() is not allowed" in error["message"]


@pytest.mark.parametrize("trick", sorted(VISIBLE_TRICKS))
def test_spellings_both_lexers_read_alike_never_run_the_payload(attacker: User, trick: str) -> None:
    """Both lexers agree here, so the planner sees what Spark sees: it refuses the call, or
    the call is inside a string for both (then it comes back as the text it is)."""
    sql = VISIBLE_TRICKS[trick].format(
        expr=EXPRESSIONS["java_method"],
        upper='JAVA_METHOD("java.lang.System", "getenv", "HOME")',
        newline='java_method\n("java.lang.System", "getenv", "HOME")',
        commented='java_method /* x */ ("java.lang.System", "getenv", "HOME")',
    )
    job = attacker.run(sql)
    if job["status"] == "FINISHED":
        _, rows = result_rows(attacker.client, job["id"])
        texts = [value for row in rows for value in row if isinstance(value, str)]
        assert any("java_method(" in text for text in texts), rows  # inert text
        no_secrets(rows)
    else:
        refused(job, by_worker=False)
    no_secrets(job)


@pytest.mark.parametrize(
    "name",
    [
        "\uff4aava_method",  # fullwidth j
        "java_metho\u0501",  # Cyrillic komi de, looks like d
        "java\u200bmethod",  # zero-width space
        "java_method\u00ad",  # soft hyphen
    ],
)
def test_unicode_look_alikes_reach_nothing(attacker: User, name: str) -> None:
    job = attacker.run(f'SELECT {name}("java.lang.System", "getenv", "HOME") AS h')
    assert job["status"] == "FAILED", job
    no_secrets(job)


# -- ${…} substitution -------------------------------------------------------------------

SUBSTITUTIONS = [
    "${env:DATABASE_URL}",
    "${env:HOME}",
    "${env:TESSERA_ADMIN_PASSWORD}",
    "${system:user.name}",
    "${system:java.home}",
    "${spark:spark.app.name}",
    "${sparkconf:spark.master}",
    "${hiveconf:hive.metastore.warehouse.dir}",
    "${hivevar:x}",
    "${spark.app.name}",
    "${env:${system:user.name}}",
]


@pytest.mark.parametrize("variable", SUBSTITUTIONS)
def test_variables_are_never_substituted(attacker: User, variable: str) -> None:
    """Spark would replace ${…} in the text before parsing: the worker turns that off, so
    the literal comes back as written (and the guard checks it is off before every parse)."""
    job = attacker.run(f"SELECT '{variable}' AS v, 1 AS `{variable}`")
    assert job["status"] == "FINISHED", job
    columns, rows = result_rows(attacker.client, job["id"])
    assert rows == [[variable, 1]]
    assert [c["name"] for c in columns] == ["v", variable]
    no_secrets(rows)


# -- hand-made plans: the worker's check stands without the planner ------------------------


def _relation(alias: str, table: str = "orders") -> dict[str, Any]:
    root = next(Path(settings.TESSERA_STORAGE_ROOTS[0]).glob(f"cat_*/{table}"))
    return {
        "alias": alias,
        "identifier": ["c", "default", table],
        "kind": "table",
        "format": "parquet",
        "path": str(root),
        "options": {},
        "physical_schema": "`id` BIGINT, `qty` BIGINT",
        "columns": [{"name": "id", "kind": "physical"}, {"name": "qty", "kind": "physical"}],
    }


BYPASSES = {
    "file_path_text": "SELECT * FROM text.`/etc/passwd`",
    "file_path_parquet": "SELECT * FROM parquet.`{root}`",
    "file_path_quoted_format": "SELECT * FROM `json`.`/etc`",
    "file_uri": "SELECT * FROM csv.`file:///etc/passwd`",
    "spark_catalog": "SELECT * FROM spark_catalog.default.t",
    "global_temp": "SELECT * FROM global_temp.v",
    "unregistered_name": "SELECT * FROM orders",
    "relation_options": "SELECT * FROM `__tessera_r1` WITH ('path' = '/etc')",
    "stream": "SELECT * FROM STREAM `__tessera_r1`",
    "java_method": "SELECT java_method('java.lang.System', 'getenv', 'HOME')",
    "reflect_in_where": "SELECT * FROM `__tessera_r1` WHERE reflect('a', 'b') IS NULL",
    "reflect_in_lambda": "SELECT transform(array(1), x -> reflect('a', 'b'))",
    "reflect_in_values": "VALUES (1, reflect('a', 'b'))",
    "reflect_in_hint": "SELECT /*+ REPARTITION(reflect('a', 'b')) */ * FROM `__tessera_r1`",
    "qualified_builtin": "SELECT builtin.java_method('a', 'b')",
    "unknown_function": "SELECT no_such_function(1)",
    "python_worker_logs": "SELECT * FROM python_worker_logs()",
    "transform": "SELECT TRANSFORM(id) USING 'touch {marker}' FROM `__tessera_r1`",
    "insert_directory": "INSERT OVERWRITE DIRECTORY '{out}' USING parquet SELECT 1",
    "insert_into": "INSERT INTO `__tessera_r1` SELECT 1, 2",
    "cte_insert": "WITH c AS (SELECT 1) INSERT INTO `__tessera_r1` SELECT * FROM c",
    "cte_file": "WITH c AS (SELECT * FROM text.`/etc/passwd`) SELECT * FROM c",
    "cte_name_trick": "WITH `text, /etc/passwd` AS (SELECT 1) SELECT * FROM text.`/etc/passwd`",
    "subquery_file": "SELECT (SELECT max(value) FROM text.`/etc/passwd`)",
    "lateral_file": "SELECT * FROM `__tessera_r1`, LATERAL (SELECT * FROM text.`/etc/passwd`)",
    "identifier_computed": "SELECT * FROM IDENTIFIER(concat('__tessera_', 'r1'))",
    "identifier_file": "SELECT * FROM IDENTIFIER('text.`/etc/passwd`')",
    "parameter_marker": "SELECT * FROM `__tessera_r1` WHERE id = :id",
    "set": "SET spark.sql.variable.substitute = true",
    "reset": "RESET",
    "add_jar": "ADD JAR '{tmp}/x.jar'",
    "cache": "CACHE TABLE `__tessera_r1`",
    "create_table": "CREATE TABLE t USING parquet LOCATION '{out}' AS SELECT 1",
    "drop": "DROP TABLE IF EXISTS t",
    "execute_immediate": "EXECUTE IMMEDIATE 'SELECT 1'",
    "declare": "DECLARE v INT",
    "script": "BEGIN SELECT 1; END",
    "use": "USE spark_catalog",
    "load_data": "LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE t",
    "hidden_alias_reference": "SELECT 1 AS a -- \\\n, (SELECT count(*) FROM `__tessera_r1`) AS n",
}


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_the_worker_refuses_plans_the_planner_never_saw(
    attacker: User, tmp_path: Path, name: str
) -> None:
    marker, out = tmp_path / "ran", tmp_path / "out"
    root = str(next(Path(settings.TESSERA_STORAGE_ROOTS[0]).glob("cat_*/orders")))
    sql = BYPASSES[name].format(marker=marker, out=out, tmp=tmp_path, root=root)
    job = submit_plan(attacker.user, hand_plan(sql, relations=[_relation("__tessera_r1")]))
    done = wait_for_status(job.id, {"FAILED", "FINISHED", "CANCELED"}, 90)
    assert done.status == "FAILED", (done.status, done.error)
    assert failure(done)["code"] in ("FORBIDDEN_SQL", "SPARK_ERROR"), done.error
    if failure(done)["code"] == "FORBIDDEN_SQL":
        assert failure(done)["details"]["checked_by"] in ("spark_lexer", "spark_parser")
    else:  # Spark's own parser refused the text before anything could run
        assert "PARSE" in str(failure(done).get("details", {}).get("condition", "")), done.error
    assert not marker.exists() and not out.exists()
    assert done.result is None
    no_secrets(done.error)


def test_a_view_reading_a_file_is_refused_when_registered(attacker: User) -> None:
    view = {
        "alias": "__tessera_r2",
        "identifier": ["c", "default", "v"],
        "kind": "view",
        "sql": "SELECT value FROM text.`/etc/passwd`",
    }
    plan = hand_plan("SELECT * FROM `__tessera_r2`", relations=[_relation("__tessera_r1"), view])
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", done.error
    assert failure(done)["details"]["checked_by"] == "spark_parser"
    assert "`text`.`/etc/passwd`" in failure(done)["message"]


@pytest.mark.parametrize(
    "expression",
    [
        "reflect('java.lang.System', 'getenv', 'HOME')",
        "(SELECT max(value) FROM text.`/etc/passwd`)",
        "qty -- \\\n + java_method('a', 'b')",
        "`__tessera_f1`(qty)",
    ],
)
def test_a_computed_column_is_checked_when_the_table_is_registered(
    attacker: User, expression: str
) -> None:
    """A table row written before a check existed (or by hand): its computed column's
    expression is Spark-parsed and refused unless it calls built-ins only."""
    relation = _relation("__tessera_r1")
    relation["columns"] = [
        *relation["columns"],
        {"name": "evil", "kind": "computed", "expression": expression},
    ]
    plan = hand_plan("SELECT * FROM `__tessera_r1`", relations=[relation])
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", done.error
    assert failure(done)["code"] == "FORBIDDEN_SQL", done.error
    assert failure(done)["details"]["checked_by"] in ("spark_lexer", "spark_parser")
    no_secrets(done.error)


def test_a_sql_function_body_calling_reflect_is_refused(attacker: User) -> None:
    function = {
        "alias": "__tessera_f1",
        "identifier": ["c", "default", "f"],
        "language": "sql",
        "parameters": [["x", "INT"]],
        "return_type": "STRING",
        "body": "reflect('java.lang.System', 'getenv', 'HOME')",
    }
    plan = hand_plan("SELECT `__tessera_f1`(1) AS v", functions=[function])
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", done.error
    assert failure(done)["code"] == "FORBIDDEN_SQL"
    assert "reflect() is not allowed" in failure(done)["message"]


def test_a_sql_function_definition_spark_reads_differently_is_refused(attacker: User) -> None:
    """A return type that smuggles a second clause: Spark's parse of the CREATE FUNCTION Tessera
    wrote must be exactly that function."""
    function = {
        "alias": "__tessera_f1",
        "identifier": ["c", "default", "f"],
        "language": "sql",
        "parameters": [["x", "INT"]],
        "return_type": "INT RETURN java_method('a', 'b') --",
        "body": "x + 1",
    }
    plan = hand_plan("SELECT `__tessera_f1`(1) AS v", functions=[function])
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", done.error
    assert failure(done)["code"] == "FORBIDDEN_SQL", done.error


def test_explain_of_a_write_is_refused(attacker: User, tmp_path: Path) -> None:
    plan = hand_plan(
        f"INSERT OVERWRITE DIRECTORY '{tmp_path / 'out'}' USING parquet SELECT 1",
        action="explain",
    )
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", done.error
    assert failure(done)["details"]["checked_by"] == "spark_parser"
    assert not (tmp_path / "out").exists()


# -- what users write still runs ------------------------------------------------------------

ORDINARY = {
    "cte_window_hint": (
        "WITH big AS (SELECT * FROM orders WHERE qty > 10) "
        "SELECT /*+ BROADCAST(b) */ b.id, sum(b.qty) OVER (ORDER BY b.id) AS running "
        "FROM big b ORDER BY b.id",
        [[2, 20], [3, 50]],
    ),
    "values_lambda": (
        "SELECT id, transform(array(qty), x -> x * 2)[0] AS doubled FROM orders "
        "WHERE id IN (SELECT * FROM VALUES (1), (3)) ORDER BY id",
        [[1, 20], [3, 60]],
    ),
    "pipe_syntax": (
        "FROM orders |> WHERE qty >= 20 |> AGGREGATE sum(qty) AS total",
        [[50]],
    ),
    "comments_and_strings": (
        "SELECT 'a -- not a comment' AS s, /* a comment */ \"b\" AS t, `id` -- trailing\n"
        "FROM orders WHERE id = 1",
        [["a -- not a comment", "b", 1]],
    ),
    "explain": ("EXPLAIN SELECT * FROM orders", None),
    "generated_table": ("SELECT sum(id) AS s FROM range(5)", [[10]]),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_queries_still_run(attacker: User, name: str) -> None:
    sql, expected = ORDINARY[name]
    job = attacker.run(sql)
    assert job["status"] == "FINISHED", job
    if expected is not None:
        _, rows = result_rows(attacker.client, job["id"])
        assert rows == expected


# -- found by review: option maps that read files, partition counts, generators, UDFs ------


class Listener:
    """A local HTTP server that records every request it gets (an SSRF would reach it)."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.requests: list[str] = []
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                body = b'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def listener() -> Any:
    found = Listener()
    yield found
    found.close()


XSD_OPTIONS = [
    "map('rowValidationXSDPath', '{url}/evil.xsd')",
    "map('ROWVALIDATIONXSDPATH', '{url}/evil.xsd')",
    "map('rowTag', 'r', 'rowValidationXSDPath', '/etc/passwd')",
    "str_to_map('rowValidationXSDPath:{url}/evil.xsd')",
    "map_from_arrays(array('rowValidation' || 'XSDPath'), array('{url}/evil.xsd'))",
    "map(concat('rowValidation', 'XSDPath'), '{url}/evil.xsd')",
]


@pytest.mark.parametrize("options", XSD_OPTIONS)
def test_xml_options_cannot_fetch_a_schema(
    attacker: User, listener: Listener, options: str
) -> None:
    """from_xml's rowValidationXSDPath opened any Hadoop path — a local file, or a URL the
    worker fetched (SSRF) — and parsed it with entity resolution on."""
    expression = f"from_xml('<r>1</r>', 'r INT', {options.format(url=listener.url)})"
    job = attacker.run(f"SELECT {expression} AS x")
    refused(job)
    plan = hand_plan(f"SELECT {expression} AS x")
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", failure(done)
    assert failure(done)["details"]["checked_by"] == "spark_parser"
    assert listener.requests == []
    no_secrets(failure(done))


def test_xml_functions_with_ordinary_options_still_run(attacker: User) -> None:
    job = attacker.run(
        "SELECT from_xml('<r><a>7</a></r>', 'a INT', map('rowTag', 'r')).a AS a, "
        "to_xml(named_struct('a', 1), map('rowTag', 'row')) AS x"
    )
    assert job["status"] == "FINISHED", job
    _, rows = result_rows(attacker.client, job["id"])
    assert rows[0][0] == 7 and "<a>1</a>" in rows[0][1]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) AS n FROM range(0, 1, 1, 2000000000)",
        "SELECT /*+ REPARTITION(2000000000) */ * FROM range(10)",
        "SELECT /*+ COALESCE(100000) */ * FROM orders",
        "SELECT /*+ REPARTITION_BY_RANGE(50000, id) */ * FROM orders",
    ],
)
def test_partition_counts_in_the_query_are_capped(attacker: User, sql: str) -> None:
    """Spark allocates per partition up front: a literal count of two billion ended the
    worker's JVM (and every job on it). The session cap applies to counts in the text."""
    job = attacker.run(sql)
    error = refused(job, by_worker=True)
    assert error["details"]["checked_by"] == "spark_parser"
    assert "partitions" in error["message"]
    follow_up = attacker.run("SELECT count(*) AS n FROM range(0, 100, 1, 4)")
    assert follow_up["status"] == "FINISHED", follow_up


@pytest.mark.parametrize("generator", ["reflect", "java_method", "try_reflect"])
def test_a_generator_is_a_call_like_any_other(attacker: User, generator: str) -> None:
    call = f"{generator}('java.lang.System', 'getenv', 'HOME')"
    sql = f"SELECT id, x FROM orders LATERAL VIEW {call} t AS x"
    job = attacker.run(sql)
    refused(job)
    done = wait_for_status(
        submit_plan(
            attacker.user,
            hand_plan(
                sql.replace("orders", "`__tessera_r1`"), relations=[_relation("__tessera_r1")]
            ),
        ).id,
        {"FAILED", "FINISHED"},
        90,
    )
    assert done.status == "FAILED", failure(done)
    assert failure(done)["code"] == "FORBIDDEN_SQL"
    assert f"{generator}() is not allowed" in failure(done)["message"]


@pytest.mark.parametrize(
    "implementation",
    ["tessera_udfs.TypeVar", "tessera_udfs.text.re.compile", "tessera_udfs.text.unicodedata"],
)
def test_a_python_udf_must_be_defined_in_an_allowed_package(
    attacker: User, implementation: str
) -> None:
    function = {
        "alias": "__tessera_f1",
        "identifier": ["c", "default", "f"],
        "language": "python",
        "implementation": implementation,
        "return_type": "STRING",
    }
    plan = hand_plan("SELECT `__tessera_f1`('x') AS v", functions=[function])
    done = wait_for_status(submit_plan(attacker.user, plan).id, {"FAILED", "FINISHED"}, 90)
    assert done.status == "FAILED", failure(done)
    assert failure(done)["code"] in ("VALIDATION_ERROR", "FORBIDDEN_SQL"), failure(done)


def test_explain_names_tables_not_server_paths(attacker: User) -> None:
    job = attacker.run("EXPLAIN EXTENDED SELECT * FROM orders WHERE qty > 10")
    assert job["status"] == "FINISHED", job
    _, rows = result_rows(attacker.client, job["id"])
    text = "\n".join(str(value) for row in rows for value in row)
    assert "InMemoryFileIndex" in text or "FileScan" in text
    assert str(settings.TESSERA_STORAGE_ROOTS[0]) not in text
    assert "<location of table" in text
