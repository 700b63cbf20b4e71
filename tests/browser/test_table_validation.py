"""Schemas are always resolved (FLIP-164) in the browser: the New Table form waits for
Spark's analyzer on the live worker; an expression Spark refuses is shown at its field and
nothing is stored; the fixed expression creates the table with its type resolved.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Column, Table
from jobs.models import SchemaCheck
from tests.browser.conftest import UI
from tests.conftest import API, client_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LINES = f"{API}/catalogs/demo/databases/sales/tables/lines"


def test_an_untypable_computed_column_is_refused_at_its_field_then_fixed(
    ui: UI, page: Any, demo: User
) -> None:
    api = client_for(demo)
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/demo/sales?new=table")

    page.get_by_label("Table name").fill("lines")
    page.get_by_label("Column 1 name").fill("price")
    page.get_by_label("Column 1 data type").fill("DECIMAL(10, 2)")
    page.get_by_role("button", name="+ Physical column").click()
    page.get_by_label("Column 2 name").fill("qty")
    page.get_by_label("Column 2 data type").fill("INT")
    page.get_by_role("button", name="+ Computed column").click()
    page.get_by_label("Column 3 name").fill("total")
    expression = page.get_by_label("Column 3 expression")
    expression.fill("price * qtyy")
    expect(page.get_by_test_id("analyzer-note")).to_contain_text("Spark")
    page.get_by_role("button", name="Create table").click()

    # Spark's reason sits at column 3's expression, naming the unknown column.
    expect(expression).to_have_attribute("aria-invalid", "true")
    row_error = page.get_by_test_id("column-row-2").locator(".field-error")
    expect(row_error).to_contain_text("qtyy")
    expect(row_error).to_contain_text("`total`")
    expect(page.get_by_label("Column 2 data type")).not_to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("form-error-summary")).to_contain_text("was not created")
    expect(expression).to_have_value("price * qtyy")  # the form keeps what was typed
    expect(page).to_have_url(re.compile(r"/catalog/demo/sales\?new=table$"))
    # Nothing entered the catalog, not even for a moment; the question is gone too.
    assert not Table.objects.filter(name="lines").exists()
    assert not Column.objects.filter(table__name="lines").exists()
    assert not SchemaCheck.objects.exists()
    assert api.get(LINES).status_code == 404
    expression.scroll_into_view_if_needed()
    ui.screenshot(page, "catalog-create-table-expression-refused")

    expression.fill("price * qty")
    page.get_by_role("button", name="Create table").click()

    expect(page).to_have_url(re.compile(r"/catalog/demo/sales/table/lines$"))
    total = page.get_by_test_id("schema").get_by_test_id("column-total")
    expect(total).to_contain_text("computed")
    expect(total).to_contain_text("DECIMAL(21, 2)")  # the type Spark's analyzer gave it
    expect(total).not_to_contain_text("being typed")

    body = api.get(LINES).json()
    assert body["resolved_schema"]["expressions_resolved"] is True
    assert body["resolved_schema"]["columns"][2]["data_type"] == "DECIMAL(21, 2)"
    assert Column.objects.get(table__name="lines", name="total").data_type == "DECIMAL(21, 2)"
