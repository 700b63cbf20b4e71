"""A job's result routes under /api/v1/."""

from __future__ import annotations

from django.urls import re_path

from jobs.urls import J
from results import views
from webapp.api import route

urlpatterns = [
    route(f"{J}/result", views.JobResultView, "job-result"),
    route(f"{J}/result/chart", views.JobResultChartView, "job-result-chart"),
    re_path(
        rf"^{J}/result\.(?P<fmt>csv|json|parquet|arrow)$",
        views.JobResultDownloadView.as_view(),
        name="job-result-download",
    ),
]
