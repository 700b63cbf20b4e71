"""A fresh connection has a current catalog and database (issue 35 item 6): a user with no
place at all starts in a catalog of their own, made on first use (TESSERA_PERSONAL_CATALOG,
sessions/personal_catalog.py), where from_pandas, temporary views and SQL work at once, as
PyFlink's default_catalog.default_database does. Private to them; a place the user has
comes first."""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped]
import pytest

from catalog.models import Catalog
from tests.client.conftest import connect_as, tessera
from tests.conftest import token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_a_fresh_connection_takes_data_in_at_once(server: str) -> None:
    with tessera.connect(server, token=token_for("alice")) as env:
        assert env.get_current_catalog() == "user_alice"
        assert env.get_current_database() == "default"
        frame = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]})
        uploaded = env.from_pandas(frame)
        assert uploaded.to_pandas().sort_values("id")["name"].tolist() == ["a", "b", "c"]
        env.create_temporary_view("tv1", frame)
        assert env.list_temporary_views() == ["`user_alice`.`default`.`tv1`"]
        env.execute_sql("CREATE TABLE kept AS SELECT id FROM tv1 WHERE id > 1").wait()
        rows = env.execute_sql("SELECT count(*) AS n FROM kept").wait().collect()
        assert [r["n"] for r in rows] == [2]
    # The next connection finds the same catalog (now also where alice last worked).
    with connect_as(server, "alice") as again:
        assert again.get_current_catalog() == "user_alice"
        assert again.list_tables() == ["kept"]


def test_nobody_else_sees_the_personal_catalog(server: str) -> None:
    with connect_as(server, "alice") as alice:
        alice.execute_sql("CREATE TABLE secret (id INT)").wait()
    with connect_as(server, "bob") as bob:
        assert bob.get_current_catalog() == "user_bob"
        assert "user_alice" not in bob.list_catalogs()
        with pytest.raises(tessera.NotFoundError):
            bob.execute_sql("SELECT * FROM user_alice.default.secret").wait()
        with pytest.raises(tessera.NotFoundError):
            bob.use_catalog("user_alice")
    with pytest.raises(tessera.NotFoundError):
        connect_as(server, "bob", catalog="user_alice")


def test_a_place_the_user_has_comes_first(server: str, make, settings) -> None:
    make.catalog("shop")  # alice's, shared with everyone
    settings.TESSERA_DEFAULT_CATALOG = "shop"
    with connect_as(server, "bob") as bob:
        assert (bob.get_current_catalog(), bob.get_current_database()) == ("shop", "default")
    assert not Catalog.objects.filter(owner__username="bob").exists()


def test_an_admin_turns_it_off(server: str, settings) -> None:
    settings.TESSERA_PERSONAL_CATALOG = ""
    with connect_as(server, "alice") as env:
        assert env.get_current_catalog() is None
        with pytest.raises(tessera.ValidationError, match="no current catalog"):
            env.from_pandas(pd.DataFrame({"id": [1]}))
    assert not Catalog.objects.exists()
