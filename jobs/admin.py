from __future__ import annotations

from django.contrib import admin

from jobs.models import Worker


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin[Worker]):
    list_display = ("hostname", "pid", "started_at", "last_heartbeat")
