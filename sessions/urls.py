"""Sessions routes under /api/v1/: statements, pipelines, temporary objects, uploads, name
completion (ids are UUIDs)."""

from __future__ import annotations

from django.urls import re_path

from sessions import pipeline_views, upload_views, views
from webapp.api import route

ID = r"[^/]+"
S = rf"sessions/(?P<session>{ID})"


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
    route("complete", views.CompletionView, "complete"),
]
