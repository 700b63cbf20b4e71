"""Django admin over schedules, their runs and alerts (read mostly: the API writes them)."""

from __future__ import annotations

from django.contrib import admin

from schedules.models import Alert, Schedule, ScheduleRun


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin[Schedule]):
    list_display = ("id", "owner", "saved_query", "cron", "timezone", "enabled", "next_run_at")
    list_filter = ("enabled",)
    raw_id_fields = ("owner", "saved_query", "session")


@admin.register(ScheduleRun)
class ScheduleRunAdmin(admin.ModelAdmin[ScheduleRun]):
    list_display = ("schedule", "scheduled_for", "status", "job")
    list_filter = ("status",)
    raw_id_fields = ("schedule", "job")


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin[Alert]):
    list_display = ("name", "schedule", "column", "operator", "value", "state")
    raw_id_fields = ("schedule",)
    filter_horizontal = ("subscribers",)
