"""Table data routes under /api/v1/: a table's statistics (they read its committing jobs
too, so they are served by the write path, not the catalog)."""

from __future__ import annotations

from tabledata import views
from webapp.api import route

urlpatterns = [
    route(
        r"catalogs/(?P<catalog>[^/]+)/databases/(?P<database>[^/]+)/tables/(?P<name>[^/]+)"
        r"/statistics",
        views.TableStatisticsView,
        "table-statistics",
    ),
]
