"""Every text Tessera stores is storable: a NUL or a lone surrogate is refused where it enters.

Reproduced (a hostile probe): ``\\u0000`` inside a SQL string literal — a table's COMMENT,
a temporary table's ``'path'`` option, a ``SET`` of the session time zone — was an HTTP 500:
PostgreSQL's jsonb refuses the escape (``DataError: unsupported Unicode escape sequence``)
and its text type refuses U+0000; a lone surrogate (``\\ud800``, which JSON carries and UTF-8
cannot encode) failed the same way on both databases. Now every REST JSON body is walked
(``webapp.parsers``) and every statement scanned (``core.limits``: raw characters and string
literals' escapes) before anything is stored: ``400 VALIDATION_ERROR`` naming the field and
where in it, no job, no row. The property test feeds random code points into every stored
text field of a few create endpoints: each answer is 201 or 400, never 500, and what a 201
stored reads back exactly.

Runs on PostgreSQL (scripts/test.sh) and on SQLite: leave ``DATABASE_URL`` unset, e.g.
``TESSERA_DATA_DIR=$(mktemp -d) .venv/bin/python -m pytest tests/security/test_unstorable_text.py``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from catalog import services as catalog_services
from catalog.models import Catalog, Database, Function, Table
from core import storable
from core.limits import StatementLimits, check_statement
from jobs.models import Job, Session, TemporaryObject
from tests.conftest import API, assert_error, client_for, simple_schema
from tests.worker_helpers import open_session
from workbench.models import SavedQuery

pytestmark = [pytest.mark.django_db]

NUL = "\x00"
SURROGATE = "\ud800"
_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


@pytest.fixture
def owned(alice: User) -> str:
    """A catalog of alice's with a database ``d``."""
    name = unique("ucat")
    catalog_services.catalog_create(user=alice, name=name, default_database="d")
    return name


def post(api: APIClient, url: str, body: Any, method: str = "post") -> Any:
    """``body`` as JSON with every non-ASCII character escaped, as clients send a lone
    surrogate (DRF's test client would encode it as UTF-8, which cannot be done)."""
    return getattr(api, method)(url, data=json.dumps(body), content_type="application/json")


def tables_url(catalog: str) -> str:
    return f"{API}/catalogs/{catalog}/databases/d/tables"


def unstorable(response: Any, field: str, character: str = "U+0000") -> dict[str, Any]:
    """400 VALIDATION_ERROR naming ``field`` and the character."""
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["field"] == field, error
    assert error["details"]["character"] == character, error
    assert character in error["message"], error
    assert NUL not in str(error) and SURROGATE not in str(error), error
    return error


# --- the probe's three statements: 400, no job, nothing stored ----------------------------


def statement(api: APIClient, session_id: str, sql: str) -> Any:
    return post(api, f"{API}/sessions/{session_id}/statements", {"sql": sql})


def nothing_planned(session_id: str) -> None:
    assert not Job.objects.filter(session_id=session_id).exists()
    assert not TemporaryObject.objects.filter(session_id=session_id).exists()


# Each as the probe sent it (the escape in SQL's own string syntax) and with the character
# itself in the text (JSON's escape); column 1-based where the escape or character starts.
ESCAPES = {
    "\\u0000": "U+0000",
    "\\0": "U+0000",
    "\\000": "U+0000",
    "\\U00000000": "U+0000",
    "\\uD800": "U+D800",
    "\\uDFFF": "U+DFFF",
    NUL: "U+0000",
    SURROGATE: "U+D800",
}


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_a_table_comment_with_nul_is_refused(alice_api, owned, escape) -> None:
    session_id = open_session(alice_api)
    sql = f"CREATE TABLE {owned}.d.nt (a STRING) COMMENT 'x{escape}y'"
    error = unstorable(statement(alice_api, session_id, sql), "sql", ESCAPES[escape])
    assert error["details"]["line"] == 1, error
    assert error["details"]["column"] == sql.index(escape) + 1, error
    nothing_planned(session_id)
    assert not Table.objects.filter(database__catalog__name=owned).exists()


@pytest.mark.parametrize("escape", ["\\u0000", NUL, "\\uDBFF"])
def test_a_temporary_table_option_with_nul_is_refused(alice_api, escape) -> None:
    session_id = open_session(alice_api)
    sql = f"CREATE TEMPORARY TABLE x.y.tmp (v BIGINT) USING parquet OPTIONS ('path'='/x{escape}')"
    unstorable(statement(alice_api, session_id, sql), "sql", ESCAPES.get(escape, "U+DBFF"))
    nothing_planned(session_id)


@pytest.mark.parametrize("escape", ["\\u0000", NUL, SURROGATE])
def test_a_session_setting_with_nul_is_refused(alice_api, escape) -> None:
    session_id = open_session(alice_api, {"spark.sql.session.timeZone": "Europe/Paris"})
    sql = f"SET spark.sql.session.timeZone = 'UTC{escape}'"
    unstorable(statement(alice_api, session_id, sql), "sql", ESCAPES[escape])
    nothing_planned(session_id)
    properties = Session.objects.get(pk=session_id).properties
    assert properties["spark.sql.session.timeZone"] == "Europe/Paris", properties


def test_in_a_script_and_on_its_second_line(alice_api, owned) -> None:
    session_id = open_session(alice_api)
    script = f"CREATE TABLE {owned}.d.a (v INT);\nSET spark.sql.session.timeZone = 'UTC\\0'"
    body = {"sql": script, "script": True}
    response = post(alice_api, f"{API}/sessions/{session_id}/statements", body)
    error = unstorable(response, "sql")
    assert (error["details"]["line"], error["details"]["column"]) == (2, 38), error
    nothing_planned(session_id)
    assert not Table.objects.filter(database__catalog__name=owned).exists()


@pytest.mark.parametrize(
    "text",
    [
        "SELECT '\\\\0', '\\\\u0000'",  # an escaped backslash, then text: no NUL
        "SELECT r'\\u0000', R'\\0'",  # raw strings have no escapes
        "SELECT '\\uD83D\\uDE00', '\\U0001F600'",  # a surrogate pair is one character
        "SELECT `\\u0000`",  # no escapes in quoted names
        "SELECT 1 -- \\u0000",
        "SELECT '\\0123'",  # octal 012 then '3'
    ],
)
def test_text_that_only_looks_like_nul_is_accepted(text) -> None:
    check_statement(text, StatementLimits())


def test_the_planner_refuses_what_it_was_not_handed_checked() -> None:
    """Statements planned later (a script's next statement) are scanned by the planner."""
    with pytest.raises(storable.UnstorableText):
        check_statement("SELECT 'a\\0'", StatementLimits(), what="script")


# --- REST bodies: 400 naming the field, nothing stored -------------------------------------


def test_a_table_comment(alice_api, owned) -> None:
    body = {"name": "t", "schema": simple_schema("a INT"), "comment": f"x{NUL}y"}
    error = unstorable(post(alice_api, tables_url(owned), body), "comment")
    assert error["details"]["column"] == 2, error
    assert not Table.objects.filter(database__catalog__name=owned).exists()


def test_an_option_value(alice_api, owned, settings) -> None:
    path = f"{settings.TESSERA_STORAGE_ROOTS[0]}/x{NUL}"
    body = {
        "name": "t",
        "schema": simple_schema("a INT"),
        "options": {"connector": "csv", "path": path},
    }
    unstorable(post(alice_api, tables_url(owned), body), "options.path")
    assert not Table.objects.filter(database__catalog__name=owned).exists()


def test_a_property_key(alice_api, owned) -> None:
    body = {
        "name": "t",
        "properties": {"schema.0.name": "a", "schema.0.data-type": "INT", f"x{NUL}": "1"},
    }
    error = unstorable(post(alice_api, tables_url(owned), body), "properties")
    assert error["details"]["key"] == "x\\x00", error
    assert not Table.objects.filter(database__catalog__name=owned).exists()


def test_a_column_name(alice_api, owned) -> None:
    body = {"name": "t", "schema": simple_schema(f"a{SURROGATE} INT")}
    unstorable(post(alice_api, tables_url(owned), body), "schema.columns[0].name", "U+D800")
    assert not Table.objects.filter(database__catalog__name=owned).exists()


def test_a_view_query(alice_api, owned) -> None:
    body = {"name": "v", "query": f"SELECT 'a{NUL}'"}
    response = post(alice_api, f"{API}/catalogs/{owned}/databases/d/views", body)
    unstorable(response, "query")
    assert not Table.objects.filter(database__catalog__name=owned).exists()


def test_a_function_implementation(alice_api, owned) -> None:
    body = {"name": "f", "language": "python", "implementation": f"tessera_udfs.x{NUL}"}
    response = post(alice_api, f"{API}/catalogs/{owned}/databases/d/functions", body)
    unstorable(response, "implementation")
    assert not Function.objects.filter(database__catalog__name=owned).exists()


def test_a_saved_query_text(alice, alice_api) -> None:
    body = {"name": "q", "sql": f"SELECT 1\n-- {NUL}"}
    error = unstorable(post(alice_api, f"{API}/saved-queries", body), "sql")
    assert (error["details"]["line"], error["details"]["column"]) == (2, 4), error
    assert not SavedQuery.objects.filter(owner=alice).exists()


def test_a_team_name(admin_api) -> None:
    unstorable(post(admin_api, f"{API}/teams", {"name": f"t{NUL}"}), "name")
    assert not Group.objects.filter(name__startswith="t").exclude(name="everyone").exists()


def test_deep_inside_a_body_and_in_a_patch(alice_api, owned) -> None:
    response = post(alice_api, tables_url(owned), {"name": "t", "schema": simple_schema("a INT")})
    assert response.status_code == 201, response.content
    patch = {"options": {"connector": "parquet"}, "comment": "ok", "x": [{"y": [SURROGATE]}]}
    unstorable(post(alice_api, f"{tables_url(owned)}/t", patch, "patch"), "x[0].y[0]", "U+D800")
    assert Table.objects.get(database__catalog__name=owned, name="t").comment == ""


def test_an_escaped_backslash_is_text(alice_api, owned) -> None:
    """``"\\\\u0000"`` in JSON is the six characters \\u0000: stored as they are."""
    body = {"name": "t", "schema": simple_schema("a INT"), "comment": "x\\u0000y"}
    response = post(alice_api, tables_url(owned), body)
    assert response.status_code == 201, response.content
    assert response.json()["comment"] == "x\\u0000y"


@pytest.mark.parametrize("where", ["name", "nested name"])
def test_an_uploads_column_name(alice_api, settings, tmp_path, where) -> None:
    """An Arrow stream's column names are stored with the upload (``Upload.columns``)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from jobs.models import Upload
    from tests.results.api.test_uploads import files, ipc
    from tests.results.api.test_uploads import post as upload

    settings.UPLOADS_DIR = tmp_path / "uploads"
    if where == "name":
        table = pa.Table.from_arrays([pa.array([1])], names=[f"a{NUL}b"])
        field = "columns[0].name"
    else:
        nested = pa.array([{f"x{NUL}": 1}])
        table = pa.Table.from_arrays([nested], names=["s"])
        field = "columns[0].data_type"
    session_id = open_session(alice_api)
    unstorable(upload(alice_api, session_id, ipc(table)), field)
    assert not Upload.objects.filter(session_id=session_id).exists()
    assert files(tmp_path / "uploads") == []


# --- what Tessera reports rather than takes: stored with U+FFFD in place ------------------


def test_an_error_echoing_a_nul_is_stored_scrubbed(alice, alice_api) -> None:
    """Spark's messages may echo data (``CAST_INVALID_INPUT`` of ``'a' || char(0)``,
    ``raise_error``): the job's error and its event are stored with U+FFFD instead of
    failing the transition that ends the job."""
    from jobs.models import JobEvent
    from sessions import statements

    session = Session.objects.get(pk=open_session(alice_api))
    error = {"code": "SPARK_ERROR", "message": f"The value 'a{NUL}' cannot be cast", "details": {}}
    job = statements.fail_job(statements.new_job(session, "SELECT 1"), error)
    shown = alice_api.get(f"{API}/jobs/{job.pk}").json()
    assert shown["status"] == "FAILED", shown
    assert shown["error"]["message"] == "The value 'a\ufffd' cannot be cast", shown
    failed = JobEvent.objects.get(job_id=job.pk, type="failed")
    assert failed.detail["error"]["message"] == shown["error"]["message"]


def test_statistics_of_data_holding_a_nul_are_stored_scrubbed(alice, owned) -> None:
    database = Database.objects.get(catalog__name=owned, name="d")
    from core.schema import Schema

    table = catalog_services.table_create(
        user=alice, database=database, name="t", schema=Schema.from_dict(simple_schema("a STRING"))
    )
    column = {"name": "a", "data_type": "STRING", "null_count": 0, "min": f"{NUL}", "max": "z"}
    figures = {
        "files": 1,
        "size_bytes": 10,
        "size_computed_at": "2026-01-01T00:00:00+00:00",
        "computed_at": "2026-01-01T00:00:00+00:00",
        "row_count": 2,
        "columns": [column],
    }
    stored = catalog_services.table_store_statistics(
        user=alice, table=table, mode="table", figures=figures
    )
    assert stored["columns"][0]["min"] == "\ufffd"
    table.refresh_from_db()
    assert table.column_statistics == stored


# --- property: random code points in every stored text field: 201 or 400, never 500 --------

ODD = ["\x00", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\x01", "\x7f", "\ufffe",
       "\uffff", "'", '"', "`", "\\", "\n", "\u202e", "\U0010ffff", "😀", "é", " "]  # fmt: skip
texts = st.text(st.one_of(st.sampled_from(ODD), st.characters(exclude_categories=())), max_size=12)
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def answered(response: Any, sent: dict[str, Any]) -> dict[str, Any] | None:
    """A 201's body, or None for a 400 naming a field; anything else fails."""
    assert response.status_code in (201, 400), (response.status_code, response.content, sent)
    if response.status_code == 400:
        assert response.json()["error"]["code"] == "VALIDATION_ERROR", response.content
        return None
    body: dict[str, Any] = response.json()
    return body


def has_unstorable(*values: str) -> bool:
    return any(storable.find(v) is not None for v in values)


def trimmed(text: str) -> str:
    """What a comment field keeps: DRF's CharField strips surrounding whitespace."""
    return text.strip()


@PROPERTY
@given(comment=texts, key=texts, value=texts)
def test_catalog_texts(alice_api, comment, key, value) -> None:
    name = unique("pc")
    sent = {"name": name, "comment": comment, "properties": {key: value}}
    body = answered(post(alice_api, f"{API}/catalogs", sent), sent)
    if has_unstorable(comment, key, value):
        assert body is None
        assert not Catalog.objects.filter(name=name).exists()
        return
    if body is not None:
        got = alice_api.get(f"{API}/catalogs/{name}").json()
        assert (got["comment"], got["properties"]) == (trimmed(comment), {key: value})


@PROPERTY
@given(comment=texts, column=texts, column_comment=texts, name=texts)
def test_table_texts(alice_api, owned, comment, column, column_comment, name) -> None:
    schema = {
        "columns": [
            {"name": column, "kind": "physical", "data_type": "INT", "comment": column_comment}
        ]
    }
    sent = {"name": name, "schema": schema, "comment": comment}
    body = answered(post(alice_api, tables_url(owned), sent), sent)
    made = Table.objects.filter(database__catalog__name=owned)
    try:
        if has_unstorable(comment, column, column_comment, name):
            assert body is None
            assert not made.exists()
            return
        if body is not None:
            stored = made.get()
            assert (stored.name, stored.comment) == (name, trimmed(comment))
            assert stored.schema["columns"][0]["name"] == column
            assert stored.schema["columns"][0].get("comment") == column_comment
            assert (body["name"], body["schema"]) == (name, stored.schema)
    finally:
        made.delete()


@PROPERTY
@given(comment=texts, name=texts)
def test_database_texts(alice_api, owned, comment, name) -> None:
    sent = {"name": name, "comment": comment}
    body = answered(post(alice_api, f"{API}/catalogs/{owned}/databases", sent), sent)
    made = Database.objects.filter(catalog__name=owned).exclude(name="d")
    try:
        if has_unstorable(comment, name):
            assert body is None
            assert not made.exists()
            return
        if body is not None:
            stored = made.get()
            assert (stored.name, stored.comment) == (name, trimmed(comment))
            assert (body["name"], body["comment"]) == (name, trimmed(comment))
    finally:
        made.delete()


@PROPERTY
@given(name=texts, description=texts, sql=texts)
def test_saved_query_texts(alice, alice_api, name, description, sql) -> None:
    sent = {"name": name, "description": description, "sql": sql}
    body = answered(post(alice_api, f"{API}/saved-queries", sent), sent)
    made = SavedQuery.objects.filter(owner=alice)
    try:
        if has_unstorable(name, description, sql):
            assert body is None
            assert not made.exists()
            return
        if body is not None:
            got = alice_api.get(f"{API}/saved-queries/{body['id']}").json()
            assert (got["name"], got["description"], got["sql"]) == (name, description, sql)
    finally:
        made.delete()


@PROPERTY
@given(name=texts)
def test_team_names(admin: User, name) -> None:
    api = client_for(admin)
    sent = {"name": name}
    body = answered(post(api, f"{API}/teams", sent), sent)
    if has_unstorable(name):
        assert body is None
        return
    if body is not None:
        assert body["name"] == name
        assert Group.objects.filter(name=name).delete()[0] == 1
