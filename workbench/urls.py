"""Workbench routes under /api/v1/."""

from __future__ import annotations

from django.urls import re_path

from workbench import views

urlpatterns = [
    re_path(r"^saved-queries/?$", views.SavedQueryListView.as_view(), name="saved-query-list"),
    re_path(
        r"^saved-queries/(?P<query>[^/]+)/?$",
        views.SavedQueryDetailView.as_view(),
        name="saved-query-detail",
    ),
]
