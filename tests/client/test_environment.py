"""TableEnvironment against the live server: connect, SQL, catalogs, lists, drops, config."""

from __future__ import annotations

import pytest
import requests

from tests.client.conftest import PASSWORD, connect_as, tessera
from tests.conftest import token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_connect_with_a_token_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("TESSERA_URL", server)
    monkeypatch.setenv("TESSERA_TOKEN", token_for("alice"))
    with tessera.connect() as env:
        session = requests.get(
            f"{server}/api/v1/sessions/{env.session_id}",
            headers={"Authorization": f"Token {token_for('alice')}"},
            timeout=10,
        )
        assert session.status_code == 200
        assert session.json()["user"] == "alice"
    # close() ended the session
    gone = requests.get(
        f"{server}/api/v1/sessions/{env.session_id}",
        headers={"Authorization": f"Token {token_for('alice')}"},
        timeout=10,
    )
    assert gone.status_code == 404


def test_connect_errors(server, monkeypatch):
    monkeypatch.delenv("TESSERA_URL", raising=False)
    monkeypatch.delenv("TESSERA_TOKEN", raising=False)
    with pytest.raises(tessera.ValidationError, match="TESSERA_URL"):
        tessera.connect()
    with pytest.raises(tessera.ValidationError, match="credentials"):
        tessera.connect(server)
    with pytest.raises(tessera.PermissionDeniedError) as wrong:
        tessera.connect(server, username="alice", password="wrong")
    assert wrong.value.code == "NOT_AUTHENTICATED"
    with pytest.raises(tessera.PermissionDeniedError):
        tessera.connect(server, token="not-a-token")
    with pytest.raises(tessera.NotFoundError) as missing:
        connect_as(server, "alice", catalog="nope")
    assert "nope" in missing.value.message
    # nothing listens there: a clear network error, still a TesseraError
    with pytest.raises(tessera.ConnectionFailedError) as down:
        tessera.connect("http://127.0.0.1:9", token="x")
    assert isinstance(down.value, tessera.TesseraError)
    assert "Could not reach the Tessera server" in down.value.message


def test_execute_sql_and_results(t_env):
    result = t_env.execute_sql("SELECT id, price FROM orders WHERE qty > 1 ORDER BY id")
    assert isinstance(result, tessera.TableResult)
    result.wait()
    assert result.status == "FINISHED"
    rows = list(result.collect())
    assert [r["id"] for r in rows] == [1, 3]
    assert rows[0].id == 1 and rows[0][0] == 1 and len(rows[0]) == 2
    assert str(rows[1].price) == "1.25"
    assert rows[0].asdict() == {"id": 1, "price": rows[0][1]}
    assert tuple(rows[0]) == (1, rows[0].price)
    assert result.get_resolved_schema().column_names == ["id", "price"]
    types = [t.replace(" ", "") for t in result.get_resolved_schema().data_types]
    assert types == ["BIGINT", "DECIMAL(10,2)"]
    assert result.to_pandas()["id"].tolist() == [1, 3]
    assert result.to_arrow().num_rows == 2
    events = [e["type"] for e in result.events()]
    assert events[0] == "created" and events[-1] == "finished"


def test_print_is_a_plain_text_table(t_env, capsys):
    t_env.execute_sql("SELECT name FROM customers ORDER BY id").wait().print()
    out = capsys.readouterr().out
    assert "| name |" in out and "| Ada  |" in out and "3 row(s)" in out


def test_errors_carry_the_api_code(t_env):
    with pytest.raises(tessera.ParseError) as parse:
        t_env.execute_sql("SELEC 1")
    assert parse.value.code == "PARSE_ERROR"
    assert "line" in parse.value.details
    assert isinstance(parse.value, tessera.JobFailedError)
    assert parse.value.job_id
    with pytest.raises(tessera.ForbiddenSqlError) as forbidden:
        t_env.execute_sql("SELECT * FROM parquet.`/etc`")
    assert forbidden.value.code == "FORBIDDEN_SQL"
    assert isinstance(forbidden.value, tessera.PermissionDeniedError)
    with pytest.raises(tessera.NotFoundError):
        t_env.execute_sql("SELECT * FROM no_such_table")
    with pytest.raises(tessera.TesseraError) as failed:  # fails on the worker
        t_env.execute_sql("SELECT assert_true(false)").wait()
    assert isinstance(failed.value, tessera.JobFailedError)


def test_catalog_and_database(t_env):
    assert t_env.get_current_catalog() == "shop"
    assert t_env.get_current_database() == "sales"
    t_env.execute_sql("CREATE DATABASE shop.`other db`").wait()
    t_env.use_database("other db")
    assert t_env.get_current_database() == "other db"
    assert t_env.list_tables() == []
    t_env.use_catalog("shop")
    assert t_env.get_current_database() == "default"
    with pytest.raises(tessera.NotFoundError):
        t_env.use_catalog("missing")
    assert "shop" in t_env.list_catalogs()
    assert sorted(t_env.list_databases()) == ["default", "other db", "sales"]


def test_lists_include_temporary_objects_and_respect_pages(t_env):
    t_env.execute_sql("CREATE TEMPORARY VIEW tv AS SELECT 1 AS one").wait()
    t_env.execute_sql("CREATE VIEW big_orders AS SELECT * FROM orders WHERE qty > 1").wait()
    t_env.execute_sql("CREATE TEMPORARY FUNCTION twice(x INT) RETURNS INT RETURN x * 2").wait()
    assert t_env.list_tables() == ["customers", "orders"]
    assert t_env.list_views() == ["big_orders", "tv"]
    assert t_env.list_temporary_views() == ["`shop`.`sales`.`tv`"]
    assert t_env.list_temporary_tables() == []
    assert "twice" in t_env.list_user_defined_functions()
    # more than one page: the client follows next_page_token
    for i in range(3):
        t_env.execute_sql(f"CREATE CATALOG c{i}").wait()
    names = t_env._names("/catalogs")
    assert {"shop", "c0", "c1", "c2"} <= set(names)
    paged = [item["name"] for item in t_env._http.pages("/catalogs", page_size=2)]
    assert paged == names and len(paged) > 2


def test_drops_say_whether_something_existed(t_env):
    t_env.execute_sql("CREATE TABLE gone (id INT)").wait()
    assert t_env.drop_table("gone") is True
    assert t_env.drop_table("gone") is False
    t_env.execute_sql("CREATE VIEW v1 AS SELECT 1 AS x").wait()
    assert t_env.drop_view("shop.sales.v1") is True
    assert t_env.drop_view("v1") is False
    t_env.execute_sql("CREATE TEMPORARY VIEW tv AS SELECT 1 AS x").wait()
    assert t_env.drop_temporary_view("tv") is True
    assert t_env.drop_temporary_view("tv") is False
    assert t_env.drop_temporary_table("nothing") is False
    # a view is not a table: the server says so
    t_env.execute_sql("CREATE VIEW v2 AS SELECT 1 AS x").wait()
    with pytest.raises(tessera.TesseraError):
        t_env.drop_table("v2")


def test_config_is_the_sessions_set(t_env):
    config = t_env.get_config()
    config.set("result.max_rows", "500")
    assert config.get("result.max_rows") == "500"
    rows = list(t_env.execute_sql("SET result.max_rows").wait().collect())
    assert rows[0]["value"] == "500"
    config.set("spark.sql.autoBroadcastJoinThreshold", "10m")
    assert config.get("spark.sql.autoBroadcastJoinThreshold") == "10485760"
    with pytest.raises(tessera.ValidationError) as refused:
        config.set("spark.driver.memory", "1g")
    assert "spark.driver.memory" in refused.value.message
    config.reset("result.max_rows")
    assert config.get("result.max_rows") is None


def test_another_users_session_is_not_found(t_env, shop):
    with connect_as(shop, "bob") as bob_env:
        bob_env.session_id = t_env.session_id  # bob tries alice's session
        with pytest.raises(tessera.NotFoundError):
            bob_env.execute_sql("SELECT 1")
        with pytest.raises(tessera.NotFoundError):
            bob_env.get_current_catalog()
        with pytest.raises(tessera.NotFoundError):
            bob_env.get_config().set("result.max_rows", "5")
        bob_env.session_id = bob_env._session["id"]
    assert t_env.get_config().get("result.max_rows") is None


def test_tokens_never_leak_into_errors(server):
    token = token_for("alice")
    env = tessera.connect(server, token=token)
    try:
        with pytest.raises(tessera.TesseraError) as error:
            env.execute_sql("SELEC")
        assert token not in str(error.value) and PASSWORD not in str(error.value)
    finally:
        env.close()
    env.close()  # twice is fine
