"""Dashboards under /api/v1/."""

from __future__ import annotations

from dashboards import views
from webapp.api import route

urlpatterns = [
    route("dashboards", views.DashboardListView, "dashboard-list"),
    route(r"dashboards/(?P<dashboard>[^/]+)", views.DashboardDetailView, "dashboard-detail"),
    route(r"dashboards/(?P<dashboard>[^/]+)/tiles", views.TileListView, "tile-list"),
    route(
        r"dashboards/(?P<dashboard>[^/]+)/tiles/(?P<tile>[^/]+)",
        views.TileDetailView,
        "tile-detail",
    ),
    route(
        r"dashboards/(?P<dashboard>[^/]+)/tiles/(?P<tile>[^/]+)/run",
        views.TileRunView,
        "tile-run",
    ),
]
