"""The jobs list (filters in the URL, live refresh, cancel, load more), the job page (progress,
error, event timeline, open in editor) and saved queries (create, edit, delete, sharing)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from jobs.models import Job
from tests.browser.conftest import PASSWORD, UI, wait_until
from tests.conftest import API, client_for
from tests.worker_helpers import open_session, statement, wait_job, with_stages
from workbench.models import SavedQuery

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Long enough to be canceled (tests/sessions/worker/test_statements.py): a count over a big
# cross join.
SLOW_SQL = "SELECT count(*) AS n FROM range(0, 100000000) AS a CROSS JOIN range(0, 100000) AS b"


class Runner:
    """Statements as one user through the REST API, in one session."""

    def __init__(self, user: User) -> None:
        self.api = client_for(user)
        self.session = open_session(self.api)

    def submit(self, sql: str) -> dict[str, Any]:
        return statement(self.api, self.session, sql)

    def run(self, sql: str, timeout: float = 120) -> dict[str, Any]:
        return wait_job(self.api, self.submit(sql)["id"], timeout=timeout)

    def start_slow(self) -> str:
        """A slow query whose Spark tasks are running."""
        job_id = str(self.submit(SLOW_SQL)["id"])
        wait_until(
            lambda: Job.objects.filter(pk=job_id, progress__tasks_total__gt=0).exists(),
            60,
            message="the slow query's Spark tasks",
        )
        return job_id


def user_in(name: str, *teams: str) -> User:
    user = User.objects.create_user(name, password=PASSWORD)
    for team in teams:
        user.groups.add(Group.objects.get_or_create(name=team)[0])
    return user


@pytest.fixture
def other_page(_browser: Any, ui: UI) -> Iterator[Any]:
    """A second browser context (its own cookies) for another user."""
    context = _browser.new_context(viewport={"width": 1280, "height": 800}, base_url=ui.url)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def job_row(page: Any, job_id: str) -> Any:
    return page.locator(f'tr[data-job-id="{job_id}"]')


# --- jobs page ---------------------------------------------------------------------------------


def test_cancel_a_running_query_from_the_jobs_page(ui: UI, page: Any, alice: User) -> None:
    runner = Runner(alice)
    done = runner.run("SELECT 1 AS one")
    job_id = runner.start_slow()

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs")
    row = job_row(page, job_id)
    expect(row.get_by_test_id("job-status")).to_have_text("RUNNING")
    expect(row.get_by_role("progressbar")).to_be_visible()
    expect(row.get_by_role("link")).to_have_text(SLOW_SQL)
    expect(row.get_by_role("link")).to_have_attribute("href", f"/jobs/{job_id}")
    # Newest first; the finished job has no Cancel button.
    ids = page.locator("tr[data-job-id]").evaluate_all("rows => rows.map(r => r.dataset.jobId)")
    assert ids == [job_id, done["id"]]
    expect(job_row(page, done["id"]).get_by_role("button")).to_have_count(0)
    expect(job_row(page, done["id"]).get_by_test_id("job-status")).to_have_text("FINISHED")
    ui.screenshot(page, "jobs")

    row.get_by_role("button", name=re.compile("^Cancel")).click()
    # Shown within 2 s of the click: a deadline for the wait, not a measurement.
    expect(row.get_by_test_id("job-status")).to_have_text("CANCELED", timeout=2000)
    expect(row.get_by_role("button")).to_have_count(0)
    job = Job.objects.get(pk=job_id)
    assert job.status == "CANCELED"
    assert job.error is not None and job.error["code"] == "CANCELED"


def test_filters_live_in_the_url(ui: UI, page: Any, alice: User) -> None:
    runner = Runner(alice)
    ok = runner.run("SELECT 1 AS filter_me")
    failed = runner.run("SELECT nope FROM range(3)")
    setting = runner.run("SET spark.sql.shuffle.partitions = 2")
    assert (ok["status"], failed["status"], setting["status"]) == ("FINISHED", "FAILED", "FINISHED")
    everything = {ok["id"], failed["id"], setting["id"]}

    def shown() -> set[str]:
        page.wait_for_timeout(100)
        return set(
            page.locator("tr[data-job-id]").evaluate_all("rows => rows.map(r => r.dataset.jobId)")
        )

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs")
    rows = page.locator("tr[data-job-id]")
    expect(rows).to_have_count(3)
    assert shown() == everything

    filters = page.get_by_role("search", name="Filter jobs")
    filters.get_by_role("checkbox", name="FAILED").check()
    expect(page).to_have_url(re.compile(r"/jobs\?status=FAILED$"))
    expect(rows).to_have_count(1)
    assert shown() == {failed["id"]}
    filters.get_by_role("checkbox", name="FINISHED").check()
    expect(page).to_have_url(re.compile(r"status=FINISHED%2CFAILED"))
    expect(rows).to_have_count(3)

    filters.get_by_label("Kind").select_option("set")
    expect(page).to_have_url(re.compile(r"kind=set"))
    expect(rows).to_have_count(1)
    assert shown() == {setting["id"]}

    filters.get_by_role("button", name="Clear filters").click()
    expect(page).to_have_url(re.compile(r"/jobs$"))
    expect(rows).to_have_count(3)

    filters.get_by_label("Search SQL").fill("FILTER_me")
    expect(page).to_have_url(re.compile(r"q=FILTER_me"))
    expect(rows).to_have_count(1)
    assert shown() == {ok["id"]}

    # The URL alone brings the filters back.
    page.goto(f"{ui.url}/jobs?q=filter_me&status=FINISHED")
    expect(filters.get_by_label("Search SQL")).to_have_value("filter_me")
    expect(filters.get_by_role("checkbox", name="FINISHED")).to_be_checked()
    expect(filters.get_by_role("checkbox", name="FAILED")).not_to_be_checked()
    expect(rows).to_have_count(1)

    # Creation time: nothing before 2000, everything after.
    page.goto(f"{ui.url}/jobs?created_before=2000-01-01T00:00")
    expect(page.get_by_test_id("jobs-empty")).to_contain_text("No jobs match these filters.")
    expect(filters.get_by_label("Created before")).to_have_value("2000-01-01T00:00")
    page.goto(f"{ui.url}/jobs")
    filters.get_by_label("Created after").fill("2000-01-01T00:00")
    expect(page).to_have_url(re.compile(r"created_after=2000-01-01T00%3A00"))
    expect(rows).to_have_count(3)


def test_load_more_and_empty_state(ui: UI, page: Any, alice: User) -> None:
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs")
    expect(page.get_by_test_id("jobs-empty")).to_contain_text("not run any statement")

    # Statements the planner refuses end FAILED at once, without Spark.
    runner = Runner(alice)
    for i in range(55):
        assert runner.submit(f"SELEC {i}")["status"] == "FAILED"
    page.goto(f"{ui.url}/jobs")
    rows = page.locator("tr[data-job-id]")
    expect(rows).to_have_count(50)
    expect(rows.first.get_by_role("link")).to_have_text("SELEC 54")
    page.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(55)
    expect(rows.last.get_by_role("link")).to_have_text("SELEC 0")
    expect(page.get_by_role("button", name="Load more")).to_have_count(0)


# --- job page ----------------------------------------------------------------------------------


def test_job_page_of_a_ctas_shows_target_and_timeline(ui: UI, page: Any, demo: User) -> None:
    runner = Runner(demo)
    job = runner.run(
        "CREATE TABLE demo.sales.order_copy AS SELECT id, id * 2 AS twice FROM range(5)"
    )
    assert job["status"] == "FINISHED", job

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    expect(page.get_by_test_id("job-status")).to_have_text("FINISHED")
    expect(page.get_by_test_id("job-sql")).to_have_text(job["sql"])
    target = page.get_by_role("link", name="demo.sales.order_copy")
    expect(target).to_have_attribute("href", "/catalog/demo/sales/table/order_copy")
    expect(page.get_by_test_id("job-duration")).not_to_have_text("—")
    # The Spark work the worker recorded (stages and tasks, all done).
    done = Job.objects.get(pk=job["id"]).progress
    spark = page.get_by_test_id("job-spark")
    expect(spark).to_contain_text(f"{done['stages_done']} of {done['stages_total']}")
    expect(spark).to_contain_text(f"{done['tasks_done']} of {done['tasks_total']}")

    timeline = page.get_by_test_id("job-events")
    types = timeline.locator(".type")
    expect(types.first).to_have_text("created")
    # In the order things happened: the data is committed inside FINISHED, so
    # data_committed comes before finished (and both after the data was written).
    expect(types.last).to_have_text("finished")
    texts = types.all_text_contents()
    assert texts == [
        "created",
        "stage_table_created",
        "running",
        "data_written",
        "data_committed",
        "finished",
    ], texts
    # The commit protocol's steps stand out; transitions do not.
    expect(timeline.locator("li.hook .type", has_text="data_committed")).to_have_count(1)
    expect(timeline.locator("li.hook .type", has_text="stage_table_created")).to_have_count(1)
    expect(timeline.locator("li.hook", has_text="running")).to_have_count(0)
    committed = timeline.locator("li", has_text="data_committed")
    expect(committed.locator(".detail")).to_contain_text("rows: 5")
    expect(committed.locator(".at")).to_have_text(re.compile(r"^\+\d+\.\d{3} s$"))
    ui.screenshot(page, "job")

    page.get_by_role("button", name="Open in editor").click()
    expect(page).to_have_url(re.compile(r"/editor$"))


def test_job_page_shows_the_spark_stages_of_a_finished_query(
    ui: UI, page: Any, alice: User
) -> None:
    runner = Runner(alice)
    job = runner.run("SELECT id % 5 AS k, count(*) AS n FROM range(0, 1000, 1, 2) GROUP BY k")
    assert job["status"] == "FINISHED", job
    stages = with_stages(runner.api, job)["progress"]["stages"]
    assert len(stages) >= 2, stages

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    expect(page.get_by_test_id("job-status")).to_have_text("FINISHED")
    # The summary links to the stages: how many, and the rows they read (the 1,000 of range).
    link = page.get_by_role("button", name=re.compile(r"^Spark stages:"))
    expect(link).to_contain_text(f"{len(stages)} stages")
    expect(link).to_contain_text("1,000 rows read")
    link.click()
    section = page.locator("#job-stages")
    expect(section).to_be_in_viewport()
    expect(section.get_by_role("heading", name="Stages")).to_be_visible()
    table = page.get_by_test_id("job-stages")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(stages))
    headers = table.locator("thead th")
    expect(headers).to_contain_text(["Stage", "What it does", "Status", "Tasks", "Rows read"])
    for index, stage in enumerate(stages):
        row = rows.nth(index)
        expect(row).to_have_attribute("data-stage-id", str(stage["stage_id"]))
        cells = row.locator("td")
        expect(cells.nth(0)).to_have_text(str(stage["stage_id"]))
        # What the stage does first, Spark's own name for it after (its call site's action).
        if stage["shuffle_write_bytes"] > 0:
            expect(cells.nth(1)).to_contain_text("shuffles it for a join, aggregation or sort")
        expect(cells.nth(1).locator(".stage-spark-name")).to_have_text(f" · {stage['name']}")
        expect(cells.nth(2)).to_have_text("COMPLETE")
        expect(cells.nth(3)).to_have_text(f"{stage['tasks']}/{stage['tasks']}")
        expect(cells.nth(4)).to_have_text(f"{stage['rows_read']:,}")
        # Sizes are human-readable, the exact byte count in the tooltip.
        shuffle = cells.nth(9).locator("span")
        expect(shuffle).to_have_attribute("title", f"{stage['shuffle_write_bytes']:,} bytes")
        if stage["shuffle_write_bytes"] >= 1024:
            expect(shuffle).to_have_text(re.compile(r"^[\d.]+ (KiB|MiB)$"))
    # Nothing spilled on 1,000 rows: no spill highlighted.
    expect(table.get_by_test_id("stage-spill")).to_have_count(0)
    # Stages Spark skipped (reused shuffle output) are counted, not listed.
    skipped = job["progress"]["stages_total"] - len({s["stage_id"] for s in stages})
    note = page.get_by_test_id("job-stages-skipped")
    if skipped > 0:
        expect(note).to_contain_text(f"{skipped} stage{'' if skipped == 1 else 's'} ")
    else:
        expect(note).to_have_count(0)


def test_job_page_error_with_position(ui: UI, page: Any, alice: User) -> None:
    runner = Runner(alice)
    failed = runner.run("SELECT 1\nFROM range(3) WHERE WHERE")
    assert failed["status"] == "FAILED", failed
    details = failed["error"]["details"]

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{failed['id']}")
    error = page.get_by_test_id("job-error")
    expect(error).to_contain_text(failed["error"]["code"])
    expect(error).to_contain_text(failed["error"]["message"][:40])
    if "line" in details:
        expect(error).to_contain_text(f"at line {details['line']}")
    expect(page.get_by_test_id("result-view")).to_have_count(0)
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)

    page.goto(f"{ui.url}/jobs/00000000-0000-0000-0000-000000000000")
    expect(page.get_by_role("alert")).to_contain_text("does not exist")


def test_job_page_live_progress_cancel_and_timeline(ui: UI, page: Any, alice: User) -> None:
    job_id = Runner(alice).start_slow()
    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job_id}")
    expect(page.get_by_test_id("job-status")).to_have_text("RUNNING")
    bar = page.get_by_role("progressbar", name="Job progress")
    expect(bar).to_be_visible()
    expect(page.get_by_test_id("job-progress")).to_contain_text(re.compile(r"tasks \d+/\d+"))
    timeline = page.get_by_test_id("job-events")
    expect(timeline.locator(".type")).to_have_text(["created", "running"])

    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_test_id("job-status")).to_have_text("CANCELED", timeout=2000)
    # The timeline followed without a reload; the progress bar and Cancel are gone.
    expect(timeline.locator(".type")).to_have_text(
        ["created", "running", "cancel_requested", "canceled"]
    )
    expect(bar).to_have_count(0)
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    # Asked for, so not an error: a note saying how it ended.
    expect(page.get_by_test_id("job-canceled")).to_contain_text("Canceled while running")
    expect(page.get_by_test_id("job-error")).to_have_count(0)
    assert Job.objects.get(pk=job_id).status == "CANCELED"
    # The stages that ran are recorded a moment after the cancel, once the stopped tasks
    # settled: the page shows them without a reload.
    stages = page.get_by_test_id("job-stages").locator("tbody tr")
    expect(stages.first).to_be_visible(timeout=15_000)
    recorded = Job.objects.get(pk=job_id).progress["stages"]
    expect(stages).to_have_count(len(recorded))
    expect(page.get_by_role("button", name=re.compile(r"^Spark stages:"))).to_contain_text(
        f"{len(recorded)} stage"
    )


# --- saved queries -----------------------------------------------------------------------------


def test_saved_queries_create_edit_share_and_delete(
    ui: UI, page: Any, other_page: Any, alice: User
) -> None:
    user_in("bob", "analysts")
    user_in("carol", "marketing")
    ui.login(page, "alice")
    page.goto(f"{ui.url}/saved")
    expect(page.get_by_test_id("saved-empty")).to_be_visible()

    # Create through the form, shared with alice's teams.
    page.get_by_role("button", name="New saved query").click()
    page.get_by_label("Name", exact=True).fill("Top customers")
    page.get_by_label("Description").fill("Biggest spenders")
    page.get_by_label("SQL", exact=True).fill("SELECT 1 AS top")
    page.get_by_label("Share with my teams").check()
    page.get_by_role("button", name="Save", exact=True).click()
    item = page.get_by_test_id("saved-item").filter(has_text="Top customers")
    expect(item).to_be_visible()
    expect(item).to_contain_text("Biggest spenders")
    expect(item.locator(".badge", has_text="shared")).to_be_visible()
    row = SavedQuery.objects.get(owner=alice)
    assert (row.name, row.sql, row.shared) == ("Top customers", "SELECT 1 AS top", True)

    # Edit it.
    item.get_by_role("button", name="Edit", exact=True).click()
    page.get_by_label("Name", exact=True).fill("Top customers 2024")
    page.get_by_label("SQL", exact=True).fill("SELECT 2024 AS year")
    page.get_by_role("button", name="Save changes").click()
    item = page.get_by_test_id("saved-item").filter(has_text="Top customers 2024")
    expect(item).to_contain_text("SELECT 2024 AS year")
    row.refresh_from_db()
    assert (row.name, row.sql) == ("Top customers 2024", "SELECT 2024 AS year")

    # A private one, and a duplicate name is refused with the server's message.
    page.get_by_role("button", name="New saved query").click()
    page.get_by_label("Name", exact=True).fill("Top customers 2024")
    page.get_by_label("SQL", exact=True).fill("SELECT 3")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".field-error, .alert").first).to_be_visible()
    page.get_by_label("Name", exact=True).fill("Private scratch")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_test_id("saved-item")).to_have_count(2)
    ui.screenshot(page, "saved-queries")

    # Search by name and the "Mine" tab.
    page.get_by_label("Search by name").fill("scratch")
    expect(page.get_by_test_id("saved-item")).to_have_count(1)
    page.get_by_label("Search by name").fill("")
    page.get_by_role("tab", name="Shared with me").click()
    expect(page.get_by_test_id("saved-empty")).to_be_visible()
    page.get_by_role("tab", name="Mine").click()
    expect(page.get_by_test_id("saved-item")).to_have_count(2)

    # A teammate sees the shared one read-only, and not the private one.
    ui.login(other_page, "bob")
    other_page.goto(f"{ui.url}/saved")
    shared = other_page.get_by_test_id("saved-item")
    expect(shared).to_have_count(1)
    expect(shared).to_contain_text("Top customers 2024")
    expect(shared.get_by_test_id("read-only")).to_have_text("read-only, shared by alice")
    expect(shared.get_by_role("button", name="Edit", exact=True)).to_have_count(0)
    expect(shared.get_by_role("button", name="Delete")).to_have_count(0)
    expect(shared.get_by_role("button", name="Open in editor")).to_be_visible()
    shared.get_by_role("button", name="Open in editor").click()
    expect(other_page).to_have_url(re.compile(r"/editor$"))
    other_page.get_by_role("button", name="Log out").click()

    # Someone outside the team sees nothing.
    ui.login(other_page, "carol")
    other_page.goto(f"{ui.url}/saved")
    expect(other_page.get_by_test_id("saved-empty")).to_be_visible()
    carol_list = client_for(User.objects.get(username="carol")).get(f"{API}/saved-queries")
    assert carol_list.json()["items"] == []

    # Delete asks first; Escape (or Cancel) keeps it.
    private = page.get_by_test_id("saved-item").filter(has_text="Private scratch")
    private.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog", name="Delete saved query")
    expect(dialog).to_contain_text("Private scratch")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert SavedQuery.objects.filter(name="Private scratch").exists()
    private.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_test_id("saved-item")).to_have_count(1)
    assert not SavedQuery.objects.filter(name="Private scratch").exists()
    assert SavedQuery.objects.count() == 1


def test_job_page_of_an_explain_shows_the_plan_as_a_tree(ui: UI, page: Any, demo: User) -> None:
    runner = Runner(demo)
    job = runner.run(
        "EXPLAIN COST SELECT customer_id, sum(total) AS revenue "
        "FROM demo.sales.orders GROUP BY customer_id"
    )
    assert job["status"] == "FINISHED", job
    assert job["kind"] == "explain"

    ui.login(page, "alice")
    page.goto(f"{ui.url}/jobs/{job['id']}")
    plan = page.get_by_test_id("job-plan")
    expect(plan.get_by_role("heading", name="Physical Plan")).to_be_visible()
    # Physical plan first, each operator a node of the tree.
    expect(plan.locator("h3").first).to_have_text("Physical Plan")
    expect(plan.locator(".plan-op", has_text="HashAggregate").first).to_be_visible()
    expect(plan.locator(".plan-op", has_text="Exchange").first).to_be_visible()
    # EXPLAIN COST: the logical plan's estimates are shown with its operators.
    logical = plan.locator(".plan-section", has_text="Optimized Logical Plan")
    expect(logical.locator(".badge.info").first).to_contain_text("B")
    ui.screenshot(page, "job-plan")


def test_a_saved_query_opens_from_its_link_for_whoever_may_read_it(
    ui: UI, page: Any, other_page: Any, alice: User
) -> None:
    user_in("bob", "analysts")
    user_in("carol", "marketing")
    shared = SavedQuery.objects.create(
        owner=alice, name="Weekly revenue", sql="SELECT 42 AS revenue", shared=True
    )
    private = SavedQuery.objects.create(owner=alice, name="Scratch", sql="SELECT 7", shared=False)

    # The owner copies the link from the list (no clipboard in this browser: it is shown).
    ui.login(page, "alice")
    page.goto(f"{ui.url}/saved")
    item = page.get_by_test_id("saved-item").filter(has_text="Weekly revenue")
    item.get_by_role("button", name="Copy link").click()
    link = f"{ui.url}/saved/{shared.pk}"
    expect(page.get_by_role("status")).to_contain_text(link)

    # A teammate opens it: an editor tab with its SQL, not linked (theirs to "Save as…").
    ui.login(other_page, "bob")
    other_page.goto(link)
    expect(other_page).to_have_url(re.compile(r"/editor$"))
    content = other_page.locator(".tab-pane:not([hidden]) .cm-content")
    expect(content).to_have_text("SELECT 42 AS revenue")
    expect(other_page.get_by_role("tab", name=re.compile("Weekly revenue"))).to_be_visible()

    # Not shared with bob, unknown, and not an id at all: the same sentence, nothing opened.
    for path in (f"/saved/{private.pk}", f"/saved/{uuid_like()}", "/saved/..%2Fjobs"):
        other_page.goto(f"{ui.url}{path}")
        expect(other_page.get_by_role("alert")).to_have_text(
            "This saved query does not exist, or it is not shared with you."
        )
        expect(other_page).to_have_url(re.compile(r"/saved/"))
    other_page.get_by_role("button", name="Log out").click()

    # Someone outside alice's teams cannot open the shared one either.
    ui.login(other_page, "carol")
    other_page.goto(link)
    expect(other_page.get_by_role("alert")).to_contain_text("not shared with you")


def uuid_like() -> str:
    return "00000000-0000-4000-8000-000000000000"


def test_an_admin_searches_everyones_history_others_only_their_own(
    ui: UI, page: Any, other_page: Any, alice: User, admin: User
) -> None:
    mine = Job.objects.create(user=alice, sql="SELECT 'alice was here'", status="FINISHED")
    Job.objects.create(user=admin, sql="SELECT 'admin was here'", status="FINISHED")

    ui.login(page, "admin")
    page.goto(f"{ui.url}/jobs?user=*")
    table = page.get_by_test_id("jobs-table")
    expect(table.locator("thead th")).to_contain_text(["Created", "User", "Status"])
    row = table.locator(f"tbody tr[data-job-id='{mine.pk}']")
    expect(row).to_contain_text("alice")
    expect(row).to_contain_text("SELECT 'alice was here'")
    expect(row.get_by_role("link")).to_have_count(0)  # its page and result stay alice's
    # The User box narrows to one user, in the URL like every filter.
    box = page.get_by_label("User", exact=True)
    box.fill("admin")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]user=admin"))
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table).to_contain_text("SELECT 'admin was here'")

    # Anyone else has no User box, and a hand-made URL is refused with a sentence.
    ui.login(other_page, "alice")
    other_page.goto(f"{ui.url}/jobs")
    expect(other_page.get_by_test_id("jobs-table")).to_contain_text("alice was here")
    expect(other_page.get_by_label("User", exact=True)).to_have_count(0)
    other_page.goto(f"{ui.url}/jobs?user=admin")
    expect(other_page.get_by_role("alert")).to_contain_text(
        "Only admins can read other users' query history."
    )
    expect(other_page.get_by_text("admin was here")).to_have_count(0)
