"""Sessions, statements and jobs routes under /api/v1/ (ids are UUIDs)."""

from __future__ import annotations

from django.urls import URLPattern, re_path
from rest_framework.views import APIView

from results import upload_views
from sessions import pipeline_views, views
from tabledata import views as stats_views

ID = r"[^/]+"
S = rf"sessions/(?P<session>{ID})"
J = rf"jobs/(?P<job>{ID})"


def route(pattern: str, view: type[APIView], name: str) -> URLPattern:
    # An optional trailing slash, as for the catalog routes.
    return re_path(rf"^{pattern}/?$", view.as_view(), name=name)


urlpatterns = [
    route("sessions", views.SessionListView, "session-list"),
    route("workspace", views.WorkspaceView, "workspace"),
    route(S, views.SessionDetailView, "session-detail"),
    route(f"{S}/statements", views.StatementView, "session-statements"),
    route(f"{S}/pipelines", pipeline_views.PipelineView, "session-pipelines"),
    route(
        rf"{S}/temporary/(?P<kinds>tables|views|functions)",
        views.TemporaryObjectListView,
        "session-temporary-list",
    ),
    # The path is a SQL path (dots, backticks, spaces, even '/' once decoded): all the rest.
    re_path(
        rf"^{S}/temporary/(?P<kinds>tables|views|functions)/(?P<path>.+)$",
        views.TemporaryObjectDetailView.as_view(),
        name="session-temporary-detail",
    ),
    route(f"{S}/resolve", views.ResolveView, "session-resolve"),
    route(f"{S}/uploads", upload_views.UploadListView, "session-uploads"),
    route(rf"{S}/uploads/(?P<upload>{ID})", upload_views.UploadDetailView, "session-upload"),
    # A table's statistics read its committing jobs too, so they are served here.
    route(
        r"catalogs/(?P<catalog>[^/]+)/databases/(?P<database>[^/]+)/tables/(?P<name>[^/]+)"
        r"/statistics",
        stats_views.TableStatisticsView,
        "table-statistics",
    ),
    route("jobs", views.JobListView, "job-list"),
    route(J, views.JobDetailView, "job-detail"),
    route(f"{J}/cancel", views.JobCancelView, "job-cancel"),
    route(f"{J}/events", views.JobEventsView, "job-events"),
    route(f"{J}/result", views.JobResultView, "job-result"),
    route(f"{J}/result/chart", views.JobResultChartView, "job-result-chart"),
    re_path(
        rf"^{J}/result\.(?P<fmt>csv|json|parquet|arrow)$",
        views.JobResultDownloadView.as_view(),
        name="job-result-download",
    ),
    route("complete", views.CompletionView, "complete"),
]
