"""Grants, teams and the audit log in the browser (issue 18): Alice shares one table with team
analysts from its Permissions tab, Bob (in analysts) sees and reads it and nothing else of her
catalog, and after her revoke it is gone for him; an admin makes a team and puts a member in
it; the audit page filters by action."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from tests.browser.conftest import UI, open_page
from tests.browser.test_editor import pane, run_and_wait, set_sql
from tests.browser.test_jobs import Runner, user_in
from tests.conftest import API, PASSWORD, CatalogFactory, client_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def other_page(_browser: Any, ui: UI) -> Iterator[Any]:
    """A second browser context (its own cookies) for another user; JavaScript errors fail."""
    yield from open_page(_browser, ui)


@pytest.fixture
def root(transactional_db: None) -> User:
    return User.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)


@pytest.fixture
def shop(alice: User) -> str:
    """Alice's private catalog shop with two tables of rows, orders and payroll."""
    make = CatalogFactory(client_for(alice))
    make.catalog("shop", shared=False)
    make.database("shop", "sales")
    runner = Runner(alice)
    for sql in (
        "CREATE TABLE shop.sales.orders AS "
        "SELECT * FROM VALUES (1, 'lamp'), (2, 'desk') AS v(id, item)",
        "CREATE TABLE shop.sales.payroll AS SELECT * FROM VALUES ('carol', 5000) AS v(who, pay)",
    ):
        job = runner.run(sql)
        assert job["status"] == "FINISHED", job
    return "shop"


def grant_from_panel(page: Any, principal: str, option: str, *privileges: str) -> None:
    """Fill the Permissions grant form: the principal by completion, the privileges, Grant."""
    form = page.get_by_role("form", name="Grant privileges")
    form.get_by_role("combobox", name="Principal").fill(principal)
    form.get_by_role("option", name=re.compile(rf"^{re.escape(option)}\b")).click()
    for privilege in privileges:
        form.get_by_role("checkbox", name=privilege, exact=True).check()
    form.get_by_role("button", name="Grant").click()


def open_tree_tables(page: Any, catalog: str, database: str) -> Any:
    """Expand catalog → database → Tables in the tree; the Tables group."""
    tree = page.get_by_role("navigation", name="Catalog tree")
    tree.get_by_role("button", name=f"Expand {catalog}").click()
    tree.get_by_role("button", name=f"Expand {database}").click()
    tree.get_by_role("button", name=f"Expand Tables of {database}").click()
    return page.get_by_test_id("tree-group-tables")


def test_alice_shares_one_table_with_analysts_and_takes_it_back(
    ui: UI, page: Any, other_page: Any, alice: User, shop: str
) -> None:
    bob = user_in("bob", "analysts")
    bob_api = client_for(bob)

    # Alice lets the team enter her catalog (the catalog page's Permissions section)…
    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/shop")
    grant_from_panel(page, "analy", "analysts", "USE")
    expect(page.get_by_role("status")).to_have_text("Granted USE to team analysts.")
    expect(page.get_by_test_id("grant-team-analysts")).to_contain_text("USE")

    # …and read one table (its Permissions tab).
    page.goto(ui.url + "/catalog/shop/sales/table/orders")
    page.get_by_role("tab", name="Permissions").click()
    panel = page.get_by_test_id("permissions")
    expect(panel.get_by_test_id("permissions-owner")).to_have_text("alice")
    grant_from_panel(page, "analysts", "analysts", "SELECT")
    expect(page.get_by_role("status")).to_have_text("Granted SELECT to team analysts.")
    row = panel.get_by_test_id("grant-team-analysts")
    expect(row).to_contain_text("SELECT")
    expect(row).to_contain_text("on this table")
    ui.screenshot(page, "catalog-permissions")
    assert bob_api.get(f"{API}/catalogs/shop/databases/sales/tables/orders").status_code == 200

    # Bob sees that table and not the other, and reads its rows.
    ui.login(other_page, "bob")
    other_page.goto(ui.url + "/catalog")
    tables = open_tree_tables(other_page, "shop", "sales")
    expect(tables.get_by_role("link", name="orders")).to_be_visible()
    expect(tables.get_by_role("link", name="payroll")).to_have_count(0)
    tables.get_by_role("link", name="orders").click()
    expect(other_page.get_by_test_id("object-name")).to_contain_text("shop.sales.orders")
    search = other_page.get_by_label("Search the catalog")
    search.fill("payroll")
    expect(other_page.get_by_test_id("search-results")).to_contain_text("No matches.")
    search.fill("orders")
    expect(
        other_page.get_by_test_id("search-results").get_by_role("link", name=re.compile("orders"))
    ).to_be_visible()
    search.fill("")
    expect(other_page.get_by_test_id("read-only")).to_contain_text(
        "You hold SELECT on this table; its owner is alice."
    )
    expect(other_page.get_by_role("button", name="Drop table")).to_have_count(0)
    other_page.get_by_role("tab", name="Sample data").click()
    expect(other_page.get_by_test_id("sample")).to_contain_text("lamp", timeout=60_000)
    # His Permissions tab: his team's grant, no form to grant or revoke.
    other_page.get_by_role("tab", name="Permissions").click()
    bobs_panel = other_page.get_by_test_id("permissions")
    expect(bobs_panel.get_by_test_id("your-access")).to_contain_text("SELECT")
    expect(bobs_panel.get_by_test_id("grant-team-analysts")).to_contain_text("SELECT")
    expect(bobs_panel.get_by_role("form", name="Grant privileges")).to_have_count(0)
    expect(bobs_panel.get_by_role("button", name=re.compile("^Revoke"))).to_have_count(0)
    expect(bobs_panel.get_by_role("button", name="Transfer ownership")).to_have_count(0)
    other_page.goto(ui.url + "/editor")
    set_sql(other_page, "SELECT item FROM shop.sales.orders ORDER BY id")
    run_and_wait(other_page)
    expect(pane(other_page)).to_contain_text("desk")

    # Alice, who manages the table, sees Bob's reads in its recent access.
    page.reload()
    page.get_by_role("tab", name="Permissions").click()
    recent = page.get_by_test_id("recent-access")
    expect(recent).to_contain_text("read table shop.sales.orders")
    expect(recent.locator("tr", has_text="bob").first).to_be_visible()

    # Alice revokes it from the tab, after a confirmation: Cancel (or Escape) keeps the grant.
    revoke = panel.get_by_role("button", name="Revoke SELECT from team analysts")
    revoke.click()
    dialog = page.get_by_role("dialog", name="Revoke SELECT?")
    expect(dialog).to_contain_text("team analysts loses SELECT on this table")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    revoke.click()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(panel.get_by_test_id("grant-team-analysts")).to_contain_text("SELECT")
    expect(page.get_by_role("status")).to_have_count(0)
    assert bob_api.get(f"{API}/catalogs/shop/databases/sales/tables/orders").status_code == 200
    revoke.click()
    dialog.get_by_role("button", name="Revoke", exact=True).click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("status")).to_have_text("Revoked SELECT from team analysts.")
    expect(panel.get_by_test_id("grant-team-analysts")).to_have_count(0)

    # Bob's next query is refused before Spark, and the table is gone from his lists.
    set_sql(other_page, "SELECT item FROM shop.sales.orders")
    run_and_wait(other_page, "FAILED")
    expect(pane(other_page)).to_contain_text("PERMISSION_DENIED")
    other_page.goto(ui.url + "/catalog/shop/sales")
    expect(other_page.get_by_role("region", name="Catalog object")).to_contain_text("No tables.")
    other_page.get_by_label("Search the catalog").fill("orders")
    expect(other_page.get_by_test_id("search-results")).to_contain_text("No matches.")
    listed = bob_api.get(f"{API}/catalogs/shop/databases/sales/tables").json()["items"]
    assert listed == []


def test_an_owner_hands_a_table_on_and_unknown_principals_are_refused(
    ui: UI, page: Any, other_page: Any, alice: User
) -> None:
    user_in("bob")
    make = CatalogFactory(client_for(alice))
    make.catalog("studio", shared=False)
    make.database("studio", "work")
    make.table("studio", "work", "drafts")

    ui.login(page, "alice")
    page.goto(ui.url + "/catalog/studio/work/table/drafts")
    page.get_by_role("tab", name="Permissions").click()
    panel = page.get_by_test_id("permissions")
    # A name nobody has: the form waits for a choice; a typed user:name the server refuses.
    form = page.get_by_role("form", name="Grant privileges")
    form.get_by_role("combobox", name="Principal").fill("nobody")
    expect(form).to_contain_text("Choose a user or team from the list")
    form.get_by_role("checkbox", name="SELECT", exact=True).check()
    expect(form.get_by_role("button", name="Grant")).to_be_disabled()
    form.get_by_role("combobox", name="Principal").fill("user:nobody")
    form.get_by_role("button", name="Grant").click()
    expect(form.get_by_role("alert")).to_contain_text("nobody")
    expect(panel.get_by_test_id("no-grants")).to_be_visible()

    panel.get_by_role("button", name="Transfer ownership").click()
    dialog = page.get_by_role("dialog", name="Transfer ownership")
    dialog.get_by_role("combobox", name="New owner").fill("bo")
    dialog.get_by_role("option", name=re.compile(r"^bob\b")).click()
    dialog.get_by_role("button", name="Transfer").click()
    expect(dialog).to_have_count(0)
    expect(panel.get_by_test_id("permissions-owner")).to_have_text("bob")
    expect(page.get_by_test_id("owner")).to_have_text("bob")
    body = client_for(alice).get(f"{API}/catalogs/studio/databases/work/tables/drafts").json()
    assert body["owner"] == "bob"
    # Alice owns the catalog: she still manages the table and may hand it on again.
    expect(panel.get_by_role("button", name="Transfer ownership")).to_be_visible()

    # Bob owns it now: he may drop it, and hands ownership on himself.
    ui.login(other_page, "bob")
    other_page.goto(ui.url + "/catalog/studio/work/table/drafts")
    expect(other_page.get_by_role("button", name="Drop table")).to_be_visible()
    other_page.get_by_role("tab", name="Permissions").click()
    expect(other_page.get_by_role("button", name="Transfer ownership")).to_be_visible()
    expect(other_page.get_by_role("form", name="Grant privileges")).to_be_visible()


def test_an_outsider_cannot_open_a_hidden_catalog(
    ui: UI, page: Any, alice: User, shop: str
) -> None:
    user_in("carol")
    ui.login(page, "carol")
    page.goto(ui.url + "/catalog/shop")
    expect(page.get_by_role("alert")).to_contain_text("shop")
    expect(page.get_by_role("alert")).to_contain_text("NOT_FOUND")
    page.goto(ui.url + "/catalog")
    expect(page.get_by_role("navigation", name="Catalog tree")).not_to_contain_text("shop")


def test_an_admin_creates_a_team_and_adds_a_member(
    ui: UI, page: Any, other_page: Any, root: User
) -> None:
    bob = user_in("bob")
    ui.login(page, "root")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Teams").click()
    expect(page).to_have_url(re.compile(r"/teams$"))
    expect(page.get_by_test_id("team-everyone")).to_contain_text("every user")
    expect(page.get_by_role("button", name="Delete team everyone")).to_have_count(0)

    page.get_by_label("Team name").fill("data-team")
    page.get_by_role("button", name="Create team").click()
    expect(page.get_by_test_id("team-data-team")).to_contain_text("0 members")
    assert Group.objects.filter(name="data-team").exists()
    # A second team of the same name (in another case) is refused, and said so.
    page.get_by_label("Team name").fill("Data-Team")
    page.get_by_role("button", name="Create team").click()
    expect(page.get_by_role("alert")).to_contain_text("already exists")

    page.get_by_test_id("team-data-team").get_by_role("link", name="data-team").click()
    expect(page).to_have_url(re.compile(r"/teams/data-team$"))
    form = page.get_by_role("form", name="Add member")
    form.get_by_role("combobox", name="User").fill("bo")
    form.get_by_role("option", name=re.compile(r"^bob\b")).click()
    form.get_by_role("button", name="Add member").click()
    expect(page.get_by_role("status")).to_have_text("Added bob to data-team.")
    expect(page.get_by_test_id("member-bob")).to_be_visible()
    expect(page.get_by_text("1 member", exact=True)).to_be_visible()
    assert list(bob.groups.values_list("name", flat=True)) == ["data-team"]
    ui.screenshot(page, "team-members")

    # Bob sees his teams read-only: no create form, no delete, no remove.
    ui.login(other_page, "bob")
    other_page.goto(ui.url + "/teams")
    expect(other_page.get_by_role("heading", name="Your teams")).to_be_visible()
    expect(other_page.get_by_test_id("team-data-team")).to_contain_text("1 member")
    expect(other_page.get_by_label("Team name")).to_have_count(0)
    expect(other_page.get_by_role("button", name=re.compile("^Delete"))).to_have_count(0)
    other_page.get_by_role("link", name="data-team").click()
    expect(other_page.get_by_test_id("member-bob")).to_be_visible()
    expect(other_page.get_by_role("button", name="Remove bob")).to_have_count(0)
    expect(
        other_page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit")
    ).to_have_count(0)

    # The admin takes him out again.
    page.get_by_role("button", name="Remove bob").click()
    page.get_by_role("dialog").get_by_role("button", name="Remove member").click()
    expect(page.get_by_test_id("member-bob")).to_have_count(0)
    expect(page.get_by_role("status")).to_have_text("Removed bob from data-team.")
    assert not bob.groups.exists()


def test_the_audit_page_filters_by_action(ui: UI, page: Any, other_page: Any, root: User) -> None:
    admin = client_for(root)
    user_in("bob")
    assert admin.post(f"{API}/teams", {"name": "auditors"}).status_code == 201
    assert admin.put(f"{API}/teams/auditors/members/bob").status_code == 204
    assert admin.delete(f"{API}/teams/auditors/members/bob").status_code == 204

    ui.login(page, "root")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Audit").click()
    events = page.get_by_test_id("audit-events")
    expect(events).to_contain_text("root created team auditors")
    expect(events).to_contain_text("root added bob to team auditors")
    expect(events).to_contain_text("root removed bob from team auditors")

    filters = page.get_by_role("search", name="Filter audit events")
    filters.get_by_role("checkbox", name="member added").check()
    expect(page).to_have_url(re.compile(r"/audit\?action=member_add$"))
    expect(events.locator("tbody tr")).to_have_count(1)
    expect(events).to_contain_text("root added bob to team auditors")
    filters.get_by_role("checkbox", name="team created").check()
    expect(page).to_have_url(re.compile(r"/audit\?action=team_create%2Cmember_add$"))
    expect(events.locator("tbody tr")).to_have_count(2)
    expect(events).not_to_contain_text("removed bob")
    ui.screenshot(page, "audit")

    # The filters live in the address: a reload keeps them.
    page.reload()
    expect(page.get_by_role("checkbox", name="team created")).to_be_checked()
    expect(page.get_by_test_id("audit-events").locator("tbody tr")).to_have_count(2)
    # A text filter applies on Enter; nothing matches an unknown actor.
    page.get_by_label("Actor").fill("nobody")
    page.get_by_label("Actor").press("Enter")
    expect(page).to_have_url(re.compile(r"actor=nobody"))
    expect(page.get_by_test_id("audit-empty")).to_contain_text("No events match these filters.")
    page.get_by_role("button", name="Clear filters").click()
    expect(page).to_have_url(re.compile(r"/audit$"))
    expect(page.get_by_test_id("audit-events")).to_contain_text(
        "root removed bob from team auditors"
    )

    # Not for others: no link, and the page says why.
    ui.login(other_page, "bob")
    other_page.goto(ui.url + "/audit")
    expect(other_page.get_by_text("Only admins may read the audit log.")).to_be_visible()
    assert client_for(User.objects.get(username="bob")).get(f"{API}/audit").status_code == 403
