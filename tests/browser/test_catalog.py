"""The catalog browser: tree, object pages, create-table form, comments, staged CTAS, drop.

Every test checks what the page shows AND what the API / database then holds.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from playwright.sync_api import expect

from catalog.models import Table
from jobs.models import Job
from tests.browser.conftest import UI
from tests.browser.test_editor import pane, set_sql
from tests.conftest import API, client_for
from tests.worker_helpers import result_rows, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ORDERS = f"{API}/catalogs/demo/databases/sales/tables/orders"


def tree(page: Any) -> Any:
    return page.get_by_role("navigation", name="Catalog tree")


def open_tables_of_sales(page: Any, ui: UI) -> Any:
    """Browse the tree from the top: demo → sales → Tables; returns the tree locator."""
    page.goto(ui.url + "/catalog")
    nav = tree(page)
    nav.get_by_role("button", name="Expand demo").click()
    nav.get_by_role("button", name="Expand sales").click()
    nav.get_by_role("button", name="Tables", exact=True).click()
    return nav


def test_tree_to_orders_shows_schema_and_sample_rows(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    nav = open_tables_of_sales(page, ui)
    expect(nav.get_by_role("link", name="customers")).to_be_visible()
    nav.get_by_role("link", name="orders").click()

    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/table/orders$"))
    expect(page.get_by_test_id("object-name")).to_contain_text("demo.sales.orders")
    # The selected object is highlighted in the tree.
    expect(nav.get_by_role("link", name="orders")).to_have_attribute("aria-current", "page")
    expect(page.get_by_test_id("comment")).to_have_text("One row per order.")

    # Schema: every column of the API's resolved schema, with its type.
    resolved = api.get(ORDERS).json()["resolved_schema"]
    schema = page.get_by_test_id("schema")
    for column in resolved["columns"]:
        row = schema.get_by_test_id(f"column-{column['name']}")
        expect(row).to_contain_text(column["kind"])
        if column.get("data_type"):
            expect(row.get_by_test_id("column-type")).to_have_text(column["data_type"])
    expect(schema.get_by_test_id("column-total")).to_contain_text("price * qty")
    expect(schema.get_by_test_id("column-file")).to_contain_text("file_path")
    expect(schema.get_by_test_id("column-id")).to_contain_text("PK")
    expect(schema.get_by_test_id("column-id")).to_contain_text("NOT NULL")
    ui.screenshot(page, "catalog-tree-table")

    # Details: watermark and primary key.
    page.get_by_role("tab", name="Details").click()
    expect(page.get_by_role("tabpanel")).to_contain_text("ts - INTERVAL 5 SECONDS")
    expect(page.get_by_role("tabpanel")).to_contain_text("pk_orders")

    # Sample data: a real query job on the worker, shown with the result grid.
    page.get_by_role("tab", name="Sample data").click()
    grid = page.get_by_test_id("result-grid")
    expect(grid).to_be_visible(timeout=90_000)
    # The row count shows once: in the grid's own toolbar.
    sample = page.get_by_test_id("sample")
    expect(sample.get_by_test_id("result-count")).to_have_text("100 rows")
    expect(sample.get_by_text("100 rows", exact=True)).to_have_count(1)
    job = Job.objects.filter(sql__icontains="FROM demo.sales.orders LIMIT 100").latest("created_at")
    assert job.status == "FINISHED"
    columns, rows = result_rows(api, job.id)
    assert len(rows) == 100
    names = [c["name"] for c in columns]
    first_price = rows[0][names.index("price")]
    cells = grid.get_by_role("gridcell")
    expect(cells.first).to_be_visible()
    assert cells.count() > 0
    expect(grid.get_by_role("gridcell", name=str(first_price), exact=True).first).to_be_visible()

    # DDL: SHOW CREATE TABLE through a session of this tab.
    page.get_by_role("tab", name="DDL").click()
    expect(page.get_by_test_id("ddl")).to_contain_text("CREATE TABLE", timeout=60_000)
    expect(page.get_by_test_id("ddl")).to_contain_text("orders")

    # Search: a column hit shows table.column TYPE and leads to its table.
    page.get_by_label("Search kind").select_option("column")
    page.get_by_label("Search the catalog").fill("countr")
    hits = page.get_by_test_id("search-results")
    hit = hits.get_by_role("link", name=re.compile(r"customers\.country"))
    expect(hit).to_contain_text("CHAR(2)")
    hit.click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/table/customers$"))
    page.get_by_label("Search the catalog").fill("")
    expect(tree(page).get_by_role("link", name="customers")).to_have_attribute(
        "aria-current", "page"
    )


# A column comment with markup in it: shown as the text typed.
PRICE_COMMENT = "<b>unit</b> price, USD"


def test_create_table_form_shows_the_error_at_the_field_then_creates(
    ui: UI, page: Any, demo: User
) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    page.get_by_role("button", name="New table").click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales\?new=table$"))

    page.get_by_label("Table name").fill("lines")
    page.get_by_label("Column 1 name").fill("price")
    page.get_by_label("Column 1 data type").fill("DECIMAL(10, 2)")
    page.get_by_label("Column 1 comment").fill(PRICE_COMMENT)
    page.get_by_role("button", name="+ Physical column").click()
    page.get_by_label("Column 2 name").fill("qty")
    page.get_by_label("Column 2 data type").fill("INTEGR")
    page.get_by_role("button", name="Create table").click()

    # The error sits next to column 2's type field; nothing was created.
    bad_type = page.get_by_label("Column 2 data type")
    expect(bad_type).to_have_attribute("aria-invalid", "true")
    row_error = page.get_by_test_id("column-row-1").locator(".field-error")
    expect(row_error).to_be_visible()
    expect(row_error).to_contain_text("INTEGR")
    expect(page.get_by_label("Column 1 data type")).not_to_have_attribute("aria-invalid", "true")
    expect(bad_type).to_have_value("INTEGR")  # the form keeps what was typed
    expect(page.get_by_label("Table name")).to_have_value("lines")
    assert not Table.objects.filter(name="lines").exists()
    assert api.get(f"{API}/catalogs/demo/databases/sales/tables/lines").status_code == 404
    page.evaluate("window.scrollTo(0, 0)")
    page.locator(".page, .catalog-main, main *").evaluate_all(
        "els => els.forEach(e => { if (e.scrollTop) e.scrollTop = 0; })"
    )
    bad_type.scroll_into_view_if_needed()
    ui.screenshot(page, "catalog-create-table")

    bad_type.fill("INT")
    page.get_by_role("button", name="+ Computed column").click()
    page.get_by_label("Column 3 name").fill("total")
    page.get_by_label("Column 3 expression").fill("price * qty")
    page.get_by_label("Column 3 comment").fill("  price times quantity ")
    page.get_by_role("button", name="Create table").click()

    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/table/lines$"))
    total = page.get_by_test_id("schema").get_by_test_id("column-total")
    expect(total).to_contain_text("computed")
    expect(total).to_contain_text("price * qty")
    expect(page.get_by_test_id("schema").get_by_test_id("column-qty")).to_contain_text("INT")
    # Each column's comment in a Comment column of the schema tab, as text (no markup).
    schema = page.get_by_test_id("schema")
    expect(schema.get_by_role("columnheader", name="Comment")).to_be_visible()
    price_comment = schema.get_by_test_id("column-price").get_by_test_id("column-comment")
    expect(price_comment).to_have_text(PRICE_COMMENT)
    assert price_comment.locator("b").count() == 0
    expect(total.get_by_test_id("column-comment")).to_have_text("price times quantity")
    expect(schema.get_by_test_id("column-qty").get_by_test_id("column-comment")).to_have_text("")
    # The tree was refreshed and shows the new table.
    expect(tree(page).get_by_role("link", name="lines")).to_be_visible()

    body = api.get(f"{API}/catalogs/demo/databases/sales/tables/lines").json()
    assert body["schema"]["columns"] == [
        {
            "name": "price",
            "kind": "physical",
            "data_type": "DECIMAL(10, 2)",
            "comment": PRICE_COMMENT,
        },
        {"name": "qty", "kind": "physical", "data_type": "INT"},
        {
            "name": "total",
            "kind": "computed",
            "expression": "price * qty",
            "comment": "price times quantity",
        },
    ]
    assert body["created_by"] == "alice"


def test_create_forms_take_no_name_away(ui: UI, page: Any, demo: User) -> None:
    """The forms live in the query string (?new=…): a catalog called "new-catalog" and a
    database called "new-database", created through those forms, have pages of their own."""
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog")
    page.get_by_role("button", name="New catalog").click()
    expect(page).to_have_url(re.compile(r"/catalog\?new=catalog$"))
    page.get_by_label("Name", exact=True).fill("new-catalog")
    page.get_by_role("button", name="Create catalog").click()
    expect(page).to_have_url(re.compile(r"/catalog/new-catalog$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("new-catalog")

    page.get_by_role("button", name="New database").click()
    expect(page).to_have_url(re.compile(r"/catalog/new-catalog\?new=database$"))
    page.get_by_label("Name", exact=True).fill("new-database")
    page.get_by_role("button", name="Create database").click()
    expect(page).to_have_url(re.compile(r"/catalog/new-catalog/new-database$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("new-database")
    expect(page.get_by_role("button", name="New table")).to_be_visible()
    assert api.get(f"{API}/catalogs/new-catalog/databases/new-database").status_code == 200

    page.goto(ui.url + "/catalog/new-catalog")  # a page load, not only client navigation
    expect(page.get_by_role("heading", level=1)).to_contain_text("new-catalog")
    expect(page.get_by_role("link", name="new-database").first).to_be_visible()


@pytest.mark.parametrize(
    "payload",
    ['<img src=x onerror="window.__xss=1">', "<script>window.__xss=2</script>"],
)
def test_comment_is_rendered_as_text(ui: UI, page: Any, demo: User, payload: str) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/orders")
    page.get_by_role("button", name="Edit comment").click()
    page.get_by_label("Comment").fill(payload)
    page.get_by_role("button", name="Save comment").click()
    expect(page.get_by_test_id("comment")).to_have_text(payload)
    assert api.get(ORDERS).json()["comment"] == payload

    page.reload()
    comment = page.get_by_test_id("comment")
    expect(comment).to_have_text(payload)
    assert comment.inner_text() == payload
    assert comment.locator("img").count() == 0
    assert comment.locator("script").count() == 0
    assert page.evaluate("typeof window.__xss") == "undefined"
    # The database page lists the comment as text too.
    page.goto(ui.url + "/catalog/demo/sales")
    expect(page.get_by_test_id("row-orders")).to_contain_text(payload)
    assert page.get_by_test_id("row-orders").locator("img").count() == 0
    assert page.evaluate("typeof window.__xss") == "undefined"


# A CTAS the test holds before its commit (see the handshake below), so it may be quick.
CTAS = (
    "CREATE TABLE demo.sales.big AS "
    "SELECT id % 7 AS k, count(*) AS n, sum(id) AS s FROM range(0, 1000) GROUP BY id % 7"
)


def staged_row(name: str, timeout: float = 30) -> Table:
    """The stage table ``name`` once the CTAS job has created it (at CREATED)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = Table.objects.filter(name_key=name, status=Table.STATUS_STAGED).first()
        if row is not None:
            return row
        time.sleep(0.01)
    raise AssertionError(f"no stage table {name!r} within {timeout} s")


def test_ctas_table_is_staged_then_active(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    # Run the CTAS from the editor, then go to the catalog while it runs.
    page.goto(ui.url + "/editor")
    set_sql(page, CTAS)
    page.keyboard.press("Control+Enter")
    # The handshake: the test holds the stage table's row lock, which the job's commit (the
    # RUNNING -> FINISHED transition) waits for, so the job cannot finish before the page
    # has seen it staged, however fast or slow the machine is.
    staged_pk = staged_row("big").pk
    with transaction.atomic():
        Table.objects.select_for_update().get(pk=staged_pk)
        expect(pane(page).get_by_test_id("run-job-status")).to_have_text(
            re.compile("CREATED|RUNNING"), timeout=15_000
        )
        job = api.get(f"{API}/jobs?page_size=1").json()["items"][0]
        assert job["kind"] == "ctas" and job["sql"] == CTAS, job
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Catalog").click()
        page.get_by_role("link", name="demo", exact=True).first.click()
        tree(page).get_by_role("link", name="sales", exact=True).click()

        # The database page shows the stage table with a link to its job...
        expect(page).to_have_url(re.compile("/catalog/demo/sales$"))
        row = page.get_by_test_id("row-big")
        expect(row.locator(".badge.staged")).to_have_text("staged")
        expect(row.get_by_role("link", name=job["id"][:8])).to_have_attribute(
            "href", f"/jobs/{job['id']}"
        )
        # ... and so does the tree.
        nav = tree(page)
        nav.get_by_role("button", name="Tables", exact=True).click()
        big = nav.locator(".tree-row", has=page.get_by_role("link", name="big", exact=True))
        expect(big.locator(".badge.staged")).to_be_visible()
        staged = api.get(f"{API}/catalogs/demo/databases/sales/tables/big").json()
        assert staged["status"] == "staged", staged

    # Once the job finishes, polling (no click) turns it active.
    finished = wait_job(api, job["id"], timeout=240)
    assert finished["status"] == "FINISHED", finished
    expect(row.locator(".badge.ok")).to_have_text("active", timeout=15_000)
    expect(row.locator(".badge.staged")).to_have_count(0)
    expect(big.locator(".badge.staged")).to_have_count(0, timeout=15_000)
    body = api.get(f"{API}/catalogs/demo/databases/sales/tables/big").json()
    assert body["status"] == "active"
    assert body["staged_by_job"] is None
    assert [c["name"] for c in body["resolved_schema"]["columns"]] == ["k", "n", "s"]
    # The editor tab, still mounted, shows how its job ended.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Editor").click()
    expect(pane(page).get_by_test_id("run-job-status")).to_have_text("FINISHED")


def test_drop_table_through_the_dialog(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    nav = open_tables_of_sales(page, ui)
    nav.get_by_role("link", name="customers").click()
    expect(page.get_by_test_id("object-name")).to_contain_text("demo.sales.customers")

    page.get_by_role("button", name="Drop table").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("demo.sales.customers")
    # Escape closes it without dropping.
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert api.get(f"{API}/catalogs/demo/databases/sales/tables/customers").status_code == 200

    page.get_by_role("button", name="Drop table").click()
    page.get_by_role("dialog").get_by_role("button", name="Drop", exact=True).click()
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales$"))
    expect(tree(page).get_by_role("link", name="customers")).to_have_count(0)
    expect(tree(page).get_by_role("link", name="orders")).to_be_visible()
    response = api.get(f"{API}/catalogs/demo/databases/sales/tables/customers")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
