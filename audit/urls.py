"""Audit routes under /api/v1/."""

from __future__ import annotations

from django.urls import re_path

from audit import views

urlpatterns = [
    re_path(r"^audit/?$", views.AuditListView.as_view(), name="audit-list"),
]
