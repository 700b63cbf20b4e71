"""Workbench routes under /api/v1/."""

from __future__ import annotations

from django.urls import re_path

from workbench import tab_views, views

urlpatterns = [
    re_path(r"^saved-queries/?$", views.SavedQueryListView.as_view(), name="saved-query-list"),
    re_path(
        r"^saved-queries/(?P<query>[^/]+)/?$",
        views.SavedQueryDetailView.as_view(),
        name="saved-query-detail",
    ),
    re_path(r"^editor-tabs/?$", tab_views.EditorTabListView.as_view(), name="editor-tab-list"),
    re_path(
        r"^editor-tabs/active/?$",
        tab_views.EditorTabActiveView.as_view(),
        name="editor-tab-active",
    ),
    re_path(
        r"^editor-tabs/(?P<tab>[^/]+)/?$",
        tab_views.EditorTabDetailView.as_view(),
        name="editor-tab-detail",
    ),
]
