from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from jobs.models import Job, JobEvent, Session, TemporaryObject, Worker


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin[Worker]):
    list_display = ("hostname", "pid", "started_at", "last_heartbeat")


class _ReadOnly:
    """Jobs change only through jobs.lifecycle; the admin shows them and never edits them."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin[Session]):
    list_display = ("id", "user", "current_catalog", "current_database", "last_used_at")
    list_select_related = ("user",)
    search_fields = ("id", "user__username")
    readonly_fields = ("id", "created_at")


class JobEventInline(_ReadOnly, admin.TabularInline[JobEvent, Job]):
    model = JobEvent
    fields = ("at", "type", "detail")
    readonly_fields = ("at", "type", "detail")
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(_ReadOnly, admin.ModelAdmin[Job]):
    list_display = ("id", "user", "kind", "status", "created_at", "finished_at", "worker")
    list_filter = ("status", "kind")
    list_select_related = ("user",)
    search_fields = ("id", "sql", "user__username")
    date_hierarchy = "created_at"
    inlines = (JobEventInline,)


@admin.register(JobEvent)
class JobEventAdmin(_ReadOnly, admin.ModelAdmin[JobEvent]):
    list_display = ("job", "type", "at")
    list_filter = ("type",)
    raw_id_fields = ("job",)


@admin.register(TemporaryObject)
class TemporaryObjectAdmin(_ReadOnly, admin.ModelAdmin[TemporaryObject]):
    """Temporary objects change only through SQL and the sessions API; deleting one here
    is DROP TEMPORARY (its files, if any, stay)."""

    list_display = ("__str__", "kind", "system", "session", "created_at")
    list_filter = ("kind", "system")
    search_fields = ("name", "catalog", "database", "session__id", "session__user__username")
    raw_id_fields = ("session", "created_by_job")
