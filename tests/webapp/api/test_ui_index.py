"""The browser UI's page: index.html for client-side routes, its headers, and the page that
says the front end is not built; the API keeps its JSON 404s."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import API, assert_error
from webapp.ui import CONTENT_SECURITY_POLICY

pytestmark = pytest.mark.django_db

INDEX = (
    "<!doctype html><html><head>"
    '<script type="module" src="/static/ui/assets/index-AbCd1234.js"></script>'
    "</head><body><div id=root></div></body></html>"
)


@pytest.fixture
def built(settings, tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    settings.TESSERA_UI_DIR = dist
    return dist


@pytest.fixture
def unbuilt(settings, tmp_path: Path) -> Path:
    settings.TESSERA_UI_DIR = tmp_path / "no-dist"
    return tmp_path / "no-dist"


@pytest.mark.parametrize(
    "path",
    ["/", "/editor", "/catalog/demo/sales/orders", "/jobs/0f8e", "/saved", "/login", "/apix"],
)
def test_every_ui_route_is_the_index_page(built, path):
    response = Client().get(path)
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response.content.decode() == INDEX


def test_the_index_page_sets_the_csrf_cookie_and_strict_headers(built):
    response = Client().get("/editor")
    assert response.cookies[settings.CSRF_COOKIE_NAME].value
    assert response["Cache-Control"] == "no-cache"
    csp = response["Content-Security-Policy"]
    assert csp == CONTENT_SECURITY_POLICY
    for directive in (
        "default-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "style-src 'self' 'unsafe-inline'",
        "frame-ancestors 'none'",
    ):
        assert directive in csp
    assert "unsafe-eval" not in csp


def test_the_index_page_is_fresh_after_a_rebuild(built):
    assert Client().get("/").content.decode() == INDEX
    (built / "index.html").write_text("<!doctype html><p>new build</p>")
    assert Client().get("/").content.decode() == "<!doctype html><p>new build</p>"


def test_head_works_and_writes_are_405_json(built):
    assert Client().head("/saved").status_code == 200
    response = Client().post("/saved", {})
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response["Allow"] == "GET, HEAD"


def test_without_a_build_the_page_says_how_to_build_it(unbuilt):
    response = Client().get("/editor")
    assert response.status_code == 503
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    assert "not built" in html
    assert "make run" in html
    assert "npm ci &amp;&amp; npm run build" in html
    assert response["Cache-Control"] == "no-cache"
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "path", [f"{API}/nope", f"{API}/catalogs/x/nothing/here", "/api/", "/api/v2/catalogs", "/api"]
)
def test_unknown_api_paths_stay_json_404(built, path):
    assert_error(Client().get(path), 404, "NOT_FOUND", path)


def test_unknown_static_files_are_json_404_not_the_index(built):
    assert_error(Client().get("/static/ui/assets/missing-00000000.js"), 404, "NOT_FOUND")


def test_admin_is_still_the_admin(built):
    response = Client().get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    # Without the slash: Django's redirect to /admin/, not the UI.
    bare = Client().get("/admin")
    assert bare.status_code == 301
    assert bare["Location"] == "/admin/"


def test_the_build_is_a_static_files_folder_under_ui():
    assert ("ui", settings.TESSERA_UI_DIR) in [tuple(entry) for entry in settings.STATICFILES_DIRS]
    assert settings.WHITENOISE_USE_FINDERS is True


def test_whitenoise_serves_the_built_assets_without_collectstatic(settings, tmp_path):
    from django.contrib.staticfiles import finders
    from django.http import HttpResponse
    from django.test import RequestFactory
    from whitenoise.middleware import WhiteNoiseMiddleware  # type: ignore[import-untyped]

    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "assets" / "index-AbCd1234.js").write_text("console.log('ui');")
    (dist / "favicon.svg").write_text("<svg/>")
    settings.STATICFILES_DIRS = [("ui", dist)]
    finders.get_finder.cache_clear()  # type: ignore[attr-defined]
    try:
        middleware = WhiteNoiseMiddleware(lambda request: HttpResponse(status=404))
    finally:
        finders.get_finder.cache_clear()  # type: ignore[attr-defined]
    asset = middleware(RequestFactory().get("/static/ui/assets/index-AbCd1234.js"))
    assert asset.status_code == 200
    assert b"".join(asset.streaming_content) == b"console.log('ui');"
    assert "immutable" in asset["Cache-Control"]  # hashed names are cached for good
    icon = middleware(RequestFactory().get("/static/ui/favicon.svg"))
    assert icon.status_code == 200
    assert "immutable" not in icon.get("Cache-Control", "")


def test_system_checks_pass_whether_or_not_the_ui_is_built():
    from django.core.management import call_command

    call_command("check", fail_level="WARNING")
