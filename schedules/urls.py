"""Schedules, alerts and notifications under /api/v1/."""

from __future__ import annotations

from schedules import views
from webapp.api import route

urlpatterns = [
    route("schedules", views.ScheduleListView, "schedule-list"),
    route(r"schedules/(?P<schedule>[^/]+)", views.ScheduleDetailView, "schedule-detail"),
    route(r"schedules/(?P<schedule>[^/]+)/runs", views.ScheduleRunListView, "schedule-runs"),
    route("alerts", views.AlertListView, "alert-list"),
    route(r"alerts/(?P<alert>[^/]+)", views.AlertDetailView, "alert-detail"),
    route("notifications", views.NotificationListView, "notification-list"),
    route("notifications/unread", views.NotificationUnreadView, "notification-unread"),
    route("notifications/read-all", views.NotificationReadAllView, "notification-read-all"),
    route(
        r"notifications/(?P<notification>[^/]+)/read",
        views.NotificationReadView,
        "notification-read",
    ),
]
