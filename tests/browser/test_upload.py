"""Uploading a file into a database from the catalog browser: a CSV creating a table with a
type edited before it is created, a second CSV appended to it, a Parquet file dropped on the
database in the tree, and a type Spark refuses shown in the dialog.

Each test checks what the dialog shows AND what the tables then hold (through the API)."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jobs.models import Upload
from tests.browser.conftest import UI, wait_until
from tests.conftest import API, client_for
from tests.worker_helpers import result_rows, statement, wait_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SPARK = 120_000  # ms: a statement on the shared worker's Spark, which may be busy

FIRST = b"id,item,amount\n1,apple,12.5\n2,pear,3.25\n3,plum,\n"
SECOND = b"amount,id,item\n7.75,4,fig\n0.5,5,kiwi\n"


def query(api: Any, sql: str) -> list[list[Any]]:
    session = api.post(f"{API}/sessions", {}).json()["id"]
    job = wait_job(api, statement(api, session, sql)["id"], timeout=120)
    assert job["status"] == "FINISHED", job
    return result_rows(api, job["id"])[1]


def pick(page: Any, name: str, body: bytes, mime: str = "text/csv") -> Any:
    """Choose a file with the database page's Upload file input; returns the dialog."""
    page.get_by_test_id("upload-input").set_input_files(
        {"name": name, "mimeType": mime, "buffer": body}
    )
    dialog = page.get_by_test_id("upload-dialog")
    expect(dialog).to_be_visible()
    return dialog


def test_a_csv_creates_a_table_with_an_edited_type_then_a_second_is_appended(
    ui: UI, page: Any, demo: User
) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    expect(page.get_by_role("button", name="Upload file")).to_be_visible()

    dialog = pick(page, "Fruit Sales.csv", FIRST)
    expect(dialog.get_by_test_id("upload-summary")).to_have_text("3 rows, 3 columns read.")
    amount = dialog.get_by_label("Type of column amount")
    expect(amount).to_have_value("DOUBLE")
    expect(dialog.get_by_label("Type of column id")).to_have_value("BIGINT")
    # The inferred types are previewed at once.
    preview = dialog.get_by_test_id("upload-preview")
    expect(preview).to_contain_text("apple", timeout=SPARK)
    expect(preview).to_contain_text("12.5")
    # Edit a type and a name: the preview is Spark casting to them.
    amount.fill("DECIMAL(10, 2)")
    dialog.get_by_label("Name of column item").fill("fruit")
    create = dialog.get_by_role("button", name="Create table")
    expect(create).to_be_disabled()  # changed since the preview
    dialog.get_by_role("button", name="Check types and preview").click()
    expect(preview).to_contain_text("12.50", timeout=SPARK)
    expect(preview.locator("th", has_text="fruit")).to_be_visible()
    expect(dialog.get_by_label("New table name")).to_have_value("fruit_sales")
    ui.screenshot(page, "catalog-upload")
    page.emulate_media(color_scheme="dark")
    ui.screenshot(page, "catalog-upload-dark")
    page.emulate_media(color_scheme="light")
    expect(create).to_be_enabled()
    create.click()

    outcome = dialog.get_by_test_id("upload-outcome")
    expect(outcome).to_contain_text("Created demo.sales.fruit_sales", timeout=SPARK)
    expect(outcome.get_by_role("link", name="demo.sales.fruit_sales")).to_have_attribute(
        "href", "/catalog/demo/sales/table/fruit_sales"
    )
    table = api.get(f"{API}/catalogs/demo/databases/sales/tables/fruit_sales").json()
    columns = table["resolved_schema"]["columns"]
    assert [(c["name"], c["data_type"].replace(" ", "")) for c in columns] == [
        ("id", "BIGINT"),
        ("fruit", "STRING"),
        ("amount", "DECIMAL(10,2)"),
    ]
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    # The dialog's upload is deleted when it closes (its table keeps the rows).
    expect(page.get_by_test_id("row-fruit_sales")).to_be_visible()

    # A second file, its columns in another order, appended by name.
    dialog = pick(page, "more.csv", SECOND)
    dialog.get_by_label("Name of column item").fill("fruit")
    dialog.get_by_label("Type of column amount").fill("DECIMAL(10, 2)")
    dialog.get_by_role("button", name="Check types and preview").click()
    expect(dialog.get_by_test_id("upload-preview")).to_contain_text("7.75", timeout=SPARK)
    dialog.get_by_role("radio", name="Append to existing table").check()
    dialog.get_by_label("Table to append to").select_option("fruit_sales")
    dialog.get_by_role("button", name="Append rows").click()
    expect(dialog.get_by_test_id("upload-outcome")).to_contain_text(
        "Appended 2 rows to demo.sales.fruit_sales", timeout=SPARK
    )
    rows = query(
        api, "SELECT id, fruit, CAST(amount AS STRING) FROM demo.sales.fruit_sales ORDER BY id"
    )
    assert rows == [
        [1, "apple", "12.50"],
        [2, "pear", "3.25"],
        [3, "plum", None],
        [4, "fig", "7.75"],
        [5, "kiwi", "0.50"],
    ]


def test_a_parquet_file_dropped_on_a_database_in_the_tree(ui: UI, page: Any, demo: User) -> None:
    api = client_for(demo)
    sink = io.BytesIO()
    pq.write_table(
        pa.table({"k": pa.array([10, 20], pa.int32()), "label": ["ten", "twenty"]}),
        sink,
        row_group_size=1,
    )
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog")
    page.get_by_role("navigation", name="Catalog tree").get_by_role(
        "button", name="Expand demo"
    ).click()
    target = page.get_by_test_id("tree-database-demo.sales")
    files = page.evaluate_handle(
        """([bytes, name]) => {
            const data = new DataTransfer();
            data.items.add(new File([new Uint8Array(bytes)], name));
            return data;
        }""",
        [list(sink.getvalue()), "numbers.parquet"],
    )
    target.dispatch_event("dragover", {"dataTransfer": files})
    target.dispatch_event("drop", {"dataTransfer": files})

    expect(page).to_have_url(ui.url + "/catalog/demo/sales")
    dialog = page.get_by_test_id("upload-dialog")
    expect(dialog).to_contain_text("Upload numbers.parquet into demo.sales")
    expect(dialog.get_by_test_id("upload-summary")).to_have_text("2 rows, 2 columns read.")
    expect(dialog.get_by_label("Type of column k")).to_have_value("INT")
    expect(dialog.get_by_test_id("upload-preview")).to_contain_text("twenty", timeout=SPARK)
    dialog.get_by_role("button", name="Create table").click()
    expect(dialog.get_by_test_id("upload-outcome")).to_contain_text(
        "Created demo.sales.numbers", timeout=SPARK
    )
    assert query(api, "SELECT k, label FROM demo.sales.numbers ORDER BY k") == [
        [10, "ten"],
        [20, "twenty"],
    ]


def test_a_type_spark_refuses_shows_its_error_in_the_dialog(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    dialog = pick(page, "fruit.csv", FIRST)
    expect(dialog.get_by_test_id("upload-preview")).to_contain_text("apple", timeout=SPARK)
    dialog.get_by_label("Type of column item").fill("INT")
    dialog.get_by_role("button", name="Check types and preview").click()
    error = dialog.get_by_test_id("upload-preview-error").get_by_role("alert")
    expect(error).to_contain_text("CAST_INVALID_INPUT", timeout=SPARK)
    expect(error).to_contain_text("apple")
    expect(dialog.get_by_role("button", name="Create table")).to_be_disabled()
    ui.screenshot(page, "catalog-upload-type-error")
    page.emulate_media(color_scheme="dark")
    ui.screenshot(page, "catalog-upload-type-error-dark")
    page.emulate_media(color_scheme="light")
    # A type that is not one: the planner's parse error, in the same place.
    dialog.get_by_label("Type of column item").fill("NOT_A_TYPE")
    dialog.get_by_role("button", name="Check types and preview").click()
    expect(error).to_contain_text("Expected TYPE after CAST", timeout=SPARK)
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    wait_until(lambda: not Upload.objects.exists(), message="cancelling deletes the upload")


def test_the_progress_bar_moves_while_a_file_is_sent(ui: UI, page: Any, demo: User) -> None:
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales")
    # A slow uplink (Chromium's throttling), so the sending is seen.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 256_000},
    )
    body = b"n,s\n" + b"".join(b"%d,some text %d\n" % (i, i) for i in range(40_000))
    dialog = pick(page, "slow.csv", body)
    progress = dialog.get_by_test_id("upload-progress")
    expect(progress).to_be_visible()
    expect(dialog).to_contain_text("Sending")
    wait_until(
        lambda: 0 < float(progress.evaluate("p => p.value")) < 1,
        timeout=20,
        message="the bar shows part of the file sent",
    )
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    expect(dialog.get_by_test_id("upload-summary")).to_have_text(
        "40,000 rows, 2 columns read.", timeout=SPARK
    )
    expect(progress).to_have_count(0)
