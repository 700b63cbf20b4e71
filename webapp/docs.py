"""``/api/v1/docs``: the API's browsable documentation (Swagger UI), under a CSP.

A view module of its own: ``webapp.openapi`` is imported by DRF's settings, before
drf-spectacular's views can be.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.request import Request
from rest_framework.response import Response

# The API docs page: Swagger UI from drf-spectacular-sidecar (static files of this server),
# its start-up script served by the same view (?script), so no inline script needs allowing.
# Styles: Swagger UI sets style attributes and the page has one <style> block; images
# include data: URIs (icons). It fetches the schema from this server only.
DOCS_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class DocsView(SpectacularSwaggerSplitView):
    """``/api/v1/docs``: Swagger UI under a Content-Security-Policy."""

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        finished = super().finalize_response(request, response, *args, **kwargs)
        finished["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return finished
