"""Catalog controls follow what the user may do (``can``: the privileges of issue 18), pages
and search refresh after writes, and views and functions are created from forms through the
SQL DDL path."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Database, Table
from tests.browser.conftest import UI
from tests.conftest import API, PASSWORD, CatalogFactory, client_for, simple_schema
from tests.grants_support import share

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SALES = f"{API}/catalogs/demo/databases/sales"


@pytest.fixture
def bob(demo: User) -> User:
    """A user who owns nothing in the demo catalog (and is no admin): the demo is readable by
    all (USE, SELECT, EXECUTE to team everyone), nothing more."""
    return User.objects.create_user("bob", password=PASSWORD)


def _sales() -> Database:
    return Database.objects.get(catalog__name_key="demo", name_key="sales")


def test_a_reader_sees_no_drop_edit_or_create_and_grants_bring_them(
    ui: UI, page: Any, demo: User, bob: User
) -> None:
    bobs = client_for(bob)
    ui.login(page, "bob")
    page.goto(ui.url + "/catalog/demo/sales/table/orders")
    expect(page.get_by_test_id("object-name")).to_contain_text("demo.sales.orders")
    expect(page.get_by_test_id("read-only")).to_contain_text(
        "You hold SELECT on this table; its owner is alice."
    )
    expect(page.get_by_role("button", name="Drop table")).to_have_count(0)
    expect(page.get_by_role("button", name="Edit comment")).to_have_count(0)
    expect(page.get_by_role("button", name="Edit schema")).to_have_count(0)
    # Reading is his: Query, Sample data and Statistics are there; computing statistics is not.
    expect(page.get_by_role("button", name="Query")).to_be_visible()
    expect(page.get_by_role("tab", name="Sample data")).to_be_visible()
    page.get_by_role("tab", name="Statistics").click()
    expect(page.get_by_test_id("statistics")).to_be_visible()
    expect(page.get_by_role("button", name="Compute column statistics")).to_have_count(0)
    page.get_by_role("tab", name="Permissions").click()
    expect(page.get_by_test_id("your-access")).to_contain_text("SELECT")
    expect(page.get_by_role("form", name="Grant privileges")).to_have_count(0)
    ui.screenshot(page, "catalog-read-only")

    # The database and catalog pages: nothing to create, drop or edit.
    page.goto(ui.url + "/catalog/demo/sales")
    expect(page.get_by_test_id("read-only")).to_contain_text("You may see this database")
    for button in ("New table", "New view", "New function", "Drop database", "Edit comment"):
        expect(page.get_by_role("button", name=button)).to_have_count(0)
    page.goto(ui.url + "/catalog/demo")
    for button in ("New database", "Drop catalog", "Edit comment"):
        expect(page.get_by_role("button", name=button)).to_have_count(0)
    # What bob was not offered, he may indeed not do.
    assert bobs.delete(f"{SALES}/tables/orders").status_code == 403
    made = bobs.post(f"{SALES}/tables", {"name": "bobs_notes", "schema": simple_schema()})
    assert made.status_code == 403, made.content

    # CREATE on the database: the New buttons; what he makes is his (Edit and Drop work).
    share(_sales(), ["CREATE"], user=bob)
    page.goto(ui.url + "/catalog/demo/sales")
    expect(page.get_by_role("button", name="New table")).to_be_visible()
    expect(page.get_by_role("button", name="New view")).to_be_visible()
    expect(page.get_by_test_id("read-only")).to_contain_text("You hold CREATE on this database")
    expect(page.get_by_role("button", name="Drop database")).to_have_count(0)
    made = bobs.post(f"{SALES}/tables", {"name": "bobs_notes", "schema": simple_schema()})
    assert made.status_code == 201, made.content
    page.goto(ui.url + "/catalog/demo/sales/table/bobs_notes")
    expect(page.get_by_test_id("owner")).to_have_text("bob")
    expect(page.get_by_test_id("read-only")).to_have_count(0)
    page.get_by_role("button", name="Edit comment").click()
    page.get_by_label("Comment", exact=True).fill("bob's own")
    page.get_by_role("button", name="Save comment").click()
    expect(page.get_by_test_id("comment")).to_have_text("bob's own")
    page.get_by_role("button", name="Drop table").click()
    page.get_by_role("dialog").get_by_role("button", name="Drop", exact=True).click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales$"))
    assert bobs.get(f"{SALES}/tables/bobs_notes").status_code == 404

    # MANAGE on alice's table: he may now change and drop it, and grant on it.
    share(Table.objects.get(database=_sales(), name_key="orders"), ["MANAGE"], user=bob)
    page.goto(ui.url + "/catalog/demo/sales/table/orders")
    expect(page.get_by_role("button", name="Drop table")).to_be_visible()
    expect(page.get_by_role("button", name="Edit comment")).to_be_visible()
    expect(page.get_by_test_id("read-only")).to_have_count(0)
    page.get_by_role("tab", name="Permissions").click()
    expect(page.get_by_role("form", name="Grant privileges")).to_be_visible()
    # Only an owner (of it or what contains it) or an admin hands ownership on.
    expect(page.get_by_role("button", name="Transfer ownership")).to_have_count(0)


def test_without_select_a_table_shows_its_schema_not_its_rows(
    ui: UI, page: Any, demo: User, bob: User
) -> None:
    make = CatalogFactory(client_for(demo))
    make.catalog("vault", shared=False)
    make.database("vault", "books")
    make.table("vault", "books", "ledger", simple_schema("id BIGINT", "amount DOUBLE"))
    share(
        Table.objects.get(database__catalog__name_key="vault", name_key="ledger"), ["USE"], user=bob
    )

    ui.login(page, "bob")
    page.goto(ui.url + "/catalog/vault/books/table/ledger")
    expect(page.get_by_test_id("no-select")).to_have_text(
        "You may see this table but not read its rows: "
        "that needs SELECT on it, its database or its catalog."
    )
    expect(page.get_by_test_id("read-only")).to_contain_text("You may see this table")
    expect(page.get_by_test_id("column-amount")).to_be_visible()
    for tab in ("Schema", "Details", "DDL", "Permissions"):
        expect(page.get_by_role("tab", name=tab)).to_be_visible()
    for tab in ("Sample data", "Statistics"):
        expect(page.get_by_role("tab", name=tab)).to_have_count(0)
    expect(page.get_by_role("button", name="Query")).to_have_count(0)
    stats = client_for(bob).get(f"{API}/catalogs/vault/databases/books/tables/ledger/statistics")
    assert stats.status_code == 403, stats.content


def test_new_catalog_is_offered_to_those_who_may_create_one(
    ui: UI, page: Any, demo: User, bob: User, settings: Any
) -> None:
    ui.login(page, "bob")
    page.goto(ui.url + "/catalog")
    expect(page.get_by_role("button", name="New catalog")).to_be_visible()
    expect(page.get_by_role("link", name="+ New catalog")).to_be_visible()

    settings.TESSERA_CATALOG_CREATORS = "admins"
    page.reload()
    expect(page.get_by_role("heading", name="Catalogs")).to_be_visible()
    expect(page.get_by_role("link", name="demo").first).to_be_visible()
    expect(page.get_by_role("button", name="New catalog")).to_have_count(0)
    expect(page.get_by_role("link", name="+ New catalog")).to_have_count(0)
    refused = client_for(bob).post(f"{API}/catalogs", {"name": "bobs"})
    assert refused.status_code == 403, refused.content
    # An admin still may.
    page.get_by_role("button", name="Log out").click()
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog")
    expect(page.get_by_role("button", name="New catalog")).to_be_visible()


def test_search_results_refresh_after_a_drop(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    made = api.post(f"{SALES}/tables", {"name": "doomed_lines", "schema": simple_schema()})
    assert made.status_code == 201, made.content

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog")
    page.get_by_label("Search the catalog").fill("doomed")
    hits = page.get_by_test_id("search-results")
    hit = hits.get_by_role("link", name=re.compile(r"doomed_lines"))
    expect(hit).to_be_visible()
    hit.click()
    expect(page.get_by_test_id("object-name")).to_contain_text("demo.sales.doomed_lines")
    page.get_by_role("button", name="Drop table").click()
    page.get_by_role("dialog").get_by_role("button", name="Drop", exact=True).click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales$"))
    # The search box still holds "doomed": its answer was loaded again, without the table.
    expect(page.get_by_label("Search the catalog")).to_have_value("doomed")
    expect(hits.get_by_role("link", name=re.compile(r"doomed_lines"))).to_have_count(0)
    expect(hits).to_contain_text("No matches.")
    assert api.get(f"{SALES}/tables/doomed_lines").status_code == 404


def test_create_a_view_from_the_form(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    page.get_by_role("button", name="New view").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales\?new=view$"))

    page.get_by_label("View name").fill("big_orders")
    page.get_by_label("Comment", exact=True).fill("Orders over 100, it's said")
    # A column that does not exist: Spark's analysis refuses it and nothing is stored.
    page.get_by_placeholder("SELECT … FROM …").fill(
        "SELECT id, pricee FROM demo.sales.orders WHERE price > 100"
    )
    expect(page.get_by_test_id("ddl-preview")).to_contain_text("CREATE VIEW demo.sales.big_orders")
    page.get_by_role("button", name="Create view").click()
    expect(page.get_by_role("alert")).to_contain_text("pricee", timeout=60_000)
    assert api.get(f"{SALES}/views/big_orders").status_code == 404

    page.get_by_placeholder("SELECT … FROM …").fill(
        "SELECT id, price FROM demo.sales.orders WHERE price > 100"
    )
    page.get_by_role("button", name="Create view").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/view/big_orders$"), timeout=60_000)
    expect(page.get_by_test_id("comment")).to_have_text("Orders over 100, it's said")
    expect(page.get_by_test_id("view-query")).to_contain_text("WHERE price > 100")
    body = api.get(f"{SALES}/views/big_orders").json()
    assert body["comment"] == "Orders over 100, it's said"
    assert [c["name"] for c in body["resolved_schema"]["columns"]] == ["id", "price"]
    ui.screenshot(page, "catalog-new-view")
    # The database page (loaded again after the write) lists it.
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="sales").click()
    expect(
        page.get_by_role("region", name="Catalog object").get_by_role("link", name="big_orders")
    ).to_be_visible()


def test_the_view_form_resolves_names_in_the_database_it_creates_the_view_in(
    ui: UI, page: Any, demo: User
) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    # A name of another database of the catalog (demo.web.page_views) is not found from sales:
    # names resolve in the view's database only, and nothing is stored.
    page.goto(ui.url + "/catalog/demo/sales?new=view")
    page.get_by_label("View name").fill("busy_pages")
    query = page.get_by_placeholder("SELECT … FROM …")
    query.fill("SELECT id FROM page_views")
    page.get_by_role("button", name="Create view").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("page_views", timeout=60_000)
    expect(alert).not_to_contain_text("no current catalog")
    assert api.get(f"{SALES}/views/busy_pages").status_code == 404

    # An unqualified name of the view's own database: demo.sales.orders.
    page.get_by_label("View name").fill("many_orders")
    query.fill("SELECT id, qty FROM orders WHERE qty > 1")
    page.get_by_role("button", name="Create view").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/view/many_orders$"), timeout=60_000)
    body = api.get(f"{SALES}/views/many_orders").json()
    assert body["query"] == "SELECT id, qty FROM orders WHERE qty > 1"
    assert "`demo`.`sales`.`orders`" in body["expanded_query"], body["expanded_query"]
    assert [c["name"] for c in body["resolved_schema"]["columns"]] == ["id", "qty"]

    # The same from the web database's form: its own page_views, and orders is not found.
    page.goto(ui.url + "/catalog/demo/web?new=view")
    page.get_by_label("View name").fill("pages")
    page.get_by_placeholder("SELECT … FROM …").fill("SELECT id FROM orders")
    page.get_by_role("button", name="Create view").click()
    expect(page.get_by_role("alert")).to_contain_text("orders", timeout=60_000)
    page.get_by_placeholder("SELECT … FROM …").fill("SELECT id FROM page_views")
    page.get_by_role("button", name="Create view").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/web/view/pages$"), timeout=60_000)
    pages = api.get(f"{API}/catalogs/demo/databases/web/views/pages").json()
    assert "`demo`.`web`.`page_views`" in pages["expanded_query"], pages["expanded_query"]


def test_create_a_sql_function_from_the_form(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    page.get_by_role("button", name="New function").click()
    page.get_by_label("Function name").fill("with_vat")
    page.get_by_label("Parameter 1 name").fill("price")
    page.get_by_label("Parameter 1 type").fill("DECIMAL(10,2)")
    page.get_by_label("Returns").fill("DECIMAL(12,2)")
    page.get_by_label("Body (the expression after RETURN)").fill("price * 1.2")
    page.get_by_label("Comment", exact=True).fill("Adds 20 % VAT")
    expect(page.get_by_test_id("ddl-preview")).to_have_text(
        "CREATE FUNCTION demo.sales.with_vat(price DECIMAL(10,2))\n"
        "RETURNS DECIMAL(12,2)\nCOMMENT 'Adds 20 % VAT'\nRETURN price * 1.2"
    )
    ui.screenshot(page, "catalog-new-function")
    page.get_by_role("button", name="Create function").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/function/with_vat$"), timeout=60_000)
    expect(page.get_by_test_id("function-implementation")).to_have_text("price * 1.2")
    body = api.get(f"{SALES}/functions/with_vat").json()
    # Types as the catalog prints them (canonical).
    assert body["language"] == "sql" and body["return_type"] == "DECIMAL(12, 2)"
    assert body["parameters"] == [{"name": "price", "data_type": "DECIMAL(10, 2)"}]
    assert body["comment"] == "Adds 20 % VAT"

    # A second one with the same name: the statement's refusal is shown, nothing changes.
    page.goto(ui.url + "/catalog/demo/sales?new=function")
    page.get_by_label("Function name").fill("with_vat")
    page.get_by_label("Language").select_option("python")
    page.get_by_label("Python function (package.module.function)").fill("tessera_udfs.text.slugify")
    page.get_by_role("button", name="Create function").click()
    expect(page.get_by_role("alert")).to_contain_text("already exists", timeout=60_000)
    assert api.get(f"{SALES}/functions/with_vat").json()["language"] == "sql"


def test_table_statistics_after_a_ctas_and_an_insert(ui: UI, page: Any, demo: User) -> None:
    from tests.browser.test_jobs import Runner

    runner = Runner(demo)
    ctas = runner.run("CREATE TABLE demo.sales.counted AS SELECT id FROM range(1000)")
    assert ctas["status"] == "FINISHED", ctas
    insert = runner.run("INSERT INTO demo.sales.counted SELECT id FROM range(234)")
    assert insert["status"] == "FINISHED", insert
    api = client_for(demo)
    body = api.get(f"{SALES}/tables/counted/statistics").json()
    assert body["row_count"] == 1234 and body["last_commit"]["job"] == insert["id"]

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/counted")
    page.get_by_role("tab", name="Statistics").click()
    expect(page.get_by_test_id("stat-rows")).to_have_text("1,234")
    expect(page.get_by_test_id("stat-files")).to_have_text(f"{body['files']:,}")
    commit = page.get_by_test_id("stat-commit")
    expect(commit).to_contain_text("insert of 234 rows by alice")
    ui.screenshot(page, "catalog-statistics")
    commit.get_by_role("link", name=re.compile(r"^job ")).click()
    expect(page).to_have_url(re.compile(rf"/jobs/{insert['id']}$"))


def test_edit_a_tables_schema_with_a_preview(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    schema = simple_schema("id BIGINT", "name STRING", "ts TIMESTAMP")
    assert api.post(f"{SALES}/tables", {"name": "people", "schema": schema}).status_code == 201

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/people")
    page.get_by_role("button", name="Edit schema").click()
    editor = page.get_by_test_id("schema-editor")
    editor.get_by_label("Column 2 name").fill("full_name")
    editor.get_by_label("Column 2 comment").fill("as written")
    editor.get_by_label("Column 1 type").fill("INT")
    editor.get_by_role("button", name="+ Column").click()
    editor.get_by_label("Column 4 name").fill("age")
    editor.get_by_label("Column 4 type").fill("SMALLINT")
    editor.get_by_label("Column 1 in the primary key").check()
    editor.get_by_label("Primary key name").fill("pk_people")
    editor.get_by_label("Watermark column").select_option(label="ts")
    editor.get_by_label("Watermark expression").fill("ts - INTERVAL 10 SECONDS")
    changes = page.get_by_test_id("schema-changes")
    expect(changes).to_contain_text("ALTER TABLE demo.sales.people RENAME name TO full_name")
    expect(changes).to_contain_text("MODIFY id INT")
    expect(changes).to_contain_text("ADD age SMALLINT")
    expect(changes).to_contain_text("ADD WATERMARK FOR ts AS ts - INTERVAL 10 SECONDS")
    expect(changes).to_contain_text("ADD CONSTRAINT pk_people PRIMARY KEY (id) NOT ENFORCED")
    ui.screenshot(page, "catalog-schema-edit")

    # A type Spark does not know: the server refuses it, nothing changes.
    editor.get_by_label("Column 4 type").fill("SMALLISH")
    editor.get_by_role("button", name="Apply changes").click()
    expect(editor.get_by_role("alert")).to_contain_text("SMALLISH")
    assert [c["name"] for c in api.get(f"{SALES}/tables/people").json()["schema"]["columns"]] == [
        "id",
        "name",
        "ts",
    ]

    editor.get_by_label("Column 4 type").fill("SMALLINT")
    editor.get_by_role("button", name="Apply changes").click()
    expect(page.get_by_test_id("schema-editor")).to_have_count(0)
    expect(page.get_by_test_id("column-full_name")).to_be_visible()
    expect(page.get_by_test_id("column-id")).to_contain_text("PK")
    body = api.get(f"{SALES}/tables/people").json()["schema"]
    assert [(c["name"], c["data_type"]) for c in body["columns"]] == [
        ("id", "INT"),
        ("full_name", "STRING"),
        ("ts", "TIMESTAMP"),
        ("age", "SMALLINT"),
    ]
    assert body["columns"][1]["comment"] == "as written"
    assert body["primary_key"] == {"name": "pk_people", "columns": ["id"]}
    assert body["watermarks"] == [{"column": "ts", "expression": "ts - INTERVAL 10 SECONDS"}]
