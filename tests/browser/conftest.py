"""Browser tests: Playwright drives Debian's Chromium (headless) against the real server.

The server is pytest-django's live server (a real HTTP server in a thread, serving the built
front end from ``frontend/dist`` and the API), on the real PostgreSQL test database; the run's
shared Celery worker (tests/workers.py) with its own Spark runs the statements.
Tests use ``transactional_db`` so the worker sees their rows.

Fixtures for tests:
- ``ui``: a ``UI`` helper holding the live server's URL, with ``ui.login(page, username)``.
- ``page``: a fresh browser page (1280 x 800, downloads accepted) per test.
- ``demo``: the ``demo`` catalog of ``make run`` (demo.sales.orders / customers, with rows),
  owned by ``alice``; returns that user.
- ``alice``: a user (password ``PASSWORD``) in team ``analysts``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from tests.conftest import PASSWORD
from tests.waiting import wait_until
from tests.workers import WorkerProcess

# Playwright's sync API runs an event loop in this thread; the ORM calls the fixtures make
# in between are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
CHROMIUM = os.environ.get("TESSERA_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = os.environ.get("TESSERA_SCREENSHOTS", "")

__all__ = ["PASSWORD", "UI", "wait_until"]


def _newest_source() -> float:
    sources = [FRONTEND / "index.html", FRONTEND / "package.json", FRONTEND / "vite.config.ts"]
    sources += [FRONTEND / "scripts" / "precompress.mjs"]
    sources += [p for p in (FRONTEND / "src").rglob("*") if p.is_file()]
    return max(p.stat().st_mtime for p in sources)


def build_frontend() -> None:
    """Build ``frontend/dist`` when it is missing or older than its sources."""
    index = FRONTEND / "dist" / "index.html"
    if index.exists() and index.stat().st_mtime >= _newest_source():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to build the front end (Node.js 20+)")
    if not (FRONTEND / "node_modules").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    subprocess.run([npm, "run", "build"], cwd=FRONTEND, check=True)


@pytest.fixture(scope="session")
def _frontend_built() -> None:
    build_frontend()


@pytest.fixture
def browser_worker(worker: WorkerProcess) -> WorkerProcess:
    """The run's shared live worker (tests/workers.py) runs the browser tests' statements."""
    return worker


@pytest.fixture(scope="session")
def _browser(_frontend_built: None) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium chromium-driver")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()


@dataclass
class UI:
    url: str

    def login(self, page: Any, username: str, password: str = PASSWORD) -> None:
        """Log in through the form and wait for the shell."""
        page.goto(self.url + "/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.get_by_test_id("username").wait_for()

    def screenshot(self, page: Any, name: str) -> None:
        """Keep a screenshot under $TESSERA_SCREENSHOTS (set by `make screenshots`)."""
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


@pytest.fixture
def ui(live_server: Any, transactional_db: None, browser_worker: WorkerProcess) -> UI:
    return UI(url=live_server.url)


def open_page(browser: Any, ui: UI, **options: Any) -> Iterator[Any]:
    """A page in a browser context of its own (its own cookies and local storage), 1280 x
    800; a JavaScript error on it fails the test. For fixtures: ``yield from``."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, base_url=ui.url, **options
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def page(_browser: Any, ui: UI) -> Iterator[Any]:
    yield from open_page(_browser, ui, accept_downloads=True)


@pytest.fixture
def alice(transactional_db: None, alice: User) -> User:
    """tests/conftest.py's alice, committed (the live server reads her) and in team
    ``analysts``."""
    alice.groups.add(Group.objects.get_or_create(name="analysts")[0])
    return alice


@pytest.fixture
def demo(alice: User) -> User:
    """The demo catalog exactly as ``make run`` creates it, owned by alice."""
    from django.core.management import call_command

    alice.is_superuser = alice.is_staff = True
    alice.save()
    call_command("bootstrap", stdout=open(os.devnull, "w"))  # noqa: SIM115
    return alice
