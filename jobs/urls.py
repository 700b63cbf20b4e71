"""Jobs and engines routes under /api/v1/ (ids are UUIDs)."""

from __future__ import annotations

from jobs import engine_views, views
from webapp.api import route

J = r"jobs/(?P<job>[^/]+)"
E = r"engines/(?P<engine>[^/]+)"

urlpatterns = [
    route("jobs", views.JobListView, "job-list"),
    route(J, views.JobDetailView, "job-detail"),
    route(f"{J}/cancel", views.JobCancelView, "job-cancel"),
    route(f"{J}/events", views.JobEventsView, "job-events"),
    route("engines", engine_views.EngineListView, "engine-list"),
    route(E, engine_views.EngineDetailView, "engine-detail"),
    route(f"{E}/restart", engine_views.EngineRestartView, "engine-restart"),
    route(f"{E}/stop", engine_views.EngineStopView, "engine-stop"),
]
