"""Jobs routes under /api/v1/ (ids are UUIDs)."""

from __future__ import annotations

from jobs import views
from webapp.api import route

J = r"jobs/(?P<job>[^/]+)"

urlpatterns = [
    route("jobs", views.JobListView, "job-list"),
    route(J, views.JobDetailView, "job-detail"),
    route(f"{J}/cancel", views.JobCancelView, "job-cancel"),
    route(f"{J}/events", views.JobEventsView, "job-events"),
]
