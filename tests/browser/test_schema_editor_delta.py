"""The schema editor on a managed Delta table (issue 31 item 4): its preview is Spark's ALTER
TABLE statements and exactly those run, one job each; Delta's log and the catalog then hold
the renamed column and its comment. What Delta's ALTER cannot express is refused in the
preview; the table's comment is a COMMENT ON TABLE."""

from __future__ import annotations

from typing import Any

import pytest
from deltalake import DeltaTable
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Table
from jobs.models import Job
from tests.browser.conftest import UI
from tests.conftest import API, client_for

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

SALES = f"{API}/catalogs/demo/databases/sales"
T = "ALTER TABLE `demo`.`sales`.`people`"
# Each statement is one Delta command on the worker: a job of its own.
JOB_MS = 120_000


def test_the_editors_delta_statements_run_as_shown(ui: UI, page: Any, demo: User) -> None:
    from tests.browser.test_jobs import Runner

    made = Runner(demo).run(
        "CREATE TABLE demo.sales.people USING delta AS "
        "SELECT id, concat('n', id) AS name FROM range(3)"
    )
    assert made["status"] == "FINISHED", made
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales/table/people")
    page.get_by_role("button", name="Edit schema").click()
    editor = page.get_by_test_id("schema-editor")

    # A type change has no Delta form: refused with a sentence, nothing to apply.
    typed = editor.get_by_label("Column 1 type")
    original = typed.input_value()
    typed.fill("INT")
    expect(editor.get_by_test_id("schema-refusals")).to_contain_text(
        "Delta's ALTER TABLE does not change a column's type"
    )
    expect(editor.get_by_role("button", name="Apply changes")).to_be_disabled()
    typed.fill(original)

    editor.get_by_label("Column 2 name").fill("full_name")
    editor.get_by_label("Column 1 comment").fill("the key's id")
    statements = [
        f"{T} RENAME COLUMN `name` TO `full_name`",
        f"{T} ALTER COLUMN `id` COMMENT 'the key\\'s id'",
    ]
    expect(editor.get_by_test_id("schema-changes")).to_have_text(";\n".join(statements) + ";")
    ui.screenshot(page, "catalog-schema-edit-delta")
    editor.get_by_role("button", name="Apply changes").click()
    expect(page.get_by_test_id("schema-editor")).to_have_count(0, timeout=JOB_MS)
    expect(page.get_by_test_id("column-full_name")).to_be_visible()
    expect(page.get_by_test_id("column-id").get_by_test_id("column-comment")).to_have_text(
        "the key's id"
    )

    # What ran is the preview, as alice's statements.
    ran = Job.objects.filter(user=demo, sql__startswith="ALTER TABLE").order_by("created_at")
    assert [(j.sql, j.status) for j in ran] == [(sql, "FINISHED") for sql in statements]
    body = client_for(demo).get(f"{SALES}/tables/people").json()["schema"]
    assert [c["name"] for c in body["columns"]] == ["id", "full_name"]
    assert body["columns"][0]["comment"] == "the key's id"
    # Delta's own log has them (read by delta-rs, without Tessera).
    fields = DeltaTable(Table.objects.get(name="people").location).schema().fields
    assert [f.name for f in fields] == ["id", "full_name"]
    assert fields[0].metadata.get("comment") == "the key's id"

    # The table's comment is a COMMENT ON TABLE.
    page.get_by_role("button", name="Edit comment").click()
    page.get_by_label("Comment", exact=True).fill("Bob's people")
    page.get_by_role("button", name="Save comment").click()
    expect(page.get_by_test_id("comment")).to_have_text("Bob's people", timeout=JOB_MS)
    assert Job.objects.filter(
        user=demo, sql="COMMENT ON TABLE `demo`.`sales`.`people` IS 'Bob\\'s people'"
    ).exists()
    assert Table.objects.get(name="people").comment == "Bob's people"
