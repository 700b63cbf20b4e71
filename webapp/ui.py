"""The browser UI: the single page the front end's build (Vite, ``frontend/dist/``) made.

Every path outside ``/api/``, ``/admin/`` and ``/static/`` answers ``index.html`` so that the
front end's client-side routes (``/editor``, ``/catalog/…``, ``/jobs/…``) survive a reload.
Its assets (``/static/ui/assets/…``) are static files: ``frontend/dist`` is in
``STATICFILES_DIRS`` under the prefix ``ui`` and WhiteNoise serves them.

The page sets the CSRF cookie (the UI's writes send it back as ``X-CSRFToken``), is never
cached (a new build must reach the browser at once; the hashed assets are cached for good),
and carries a Content-Security-Policy that allows only the server's own scripts.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import ensure_csrf_cookie

from webapp.errors import error_body

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'"
)

_NOT_BUILT = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tessera: the front end is not built</title></head>
<body>
<h1>The front end is not built</h1>
<p>There is no <code>frontend/dist/index.html</code> yet. <code>make run</code> builds it; by hand:
<code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>.</p>
<p>The REST API works meanwhile: <a href="/api/v1/docs">/api/v1/docs</a>.</p>
</body>
</html>
"""


def ui_dir() -> Path:
    """Where the front end's build is (``settings.TESSERA_UI_DIR``)."""
    return Path(settings.TESSERA_UI_DIR)


def _headers(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-cache"
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response


@ensure_csrf_cookie
def ui_index(request: HttpRequest) -> HttpResponse:
    """``index.html`` of the build for every UI path; 503 with a short page when unbuilt."""
    if request.method not in ("GET", "HEAD"):
        response: HttpResponse = JsonResponse(
            error_body("METHOD_NOT_ALLOWED", f'Method "{request.method}" not allowed.'),
            status=405,
        )
        response["Allow"] = "GET, HEAD"
        return response
    index = ui_dir() / "index.html"
    try:
        html = index.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return _headers(
            HttpResponse(_NOT_BUILT, status=503, content_type="text/html; charset=utf-8")
        )
    return _headers(HttpResponse(html, content_type="text/html; charset=utf-8"))
