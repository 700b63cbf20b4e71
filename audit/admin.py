"""Django admin over the audit trail: read-only (no add, change or delete)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin[AuditEvent]):
    list_display = ("at", "actor_name", "action", "object_kind", "object", "principal_name")
    list_filter = ("action", "object_kind")
    search_fields = ("actor_name", "principal_name", "object_key")
    show_full_result_count = False  # a count of millions of rows on every page is slow
    fields = (
        "at",
        "actor_name",
        "action",
        "object_kind",
        "object",
        "securable_key",
        "principal_type",
        "principal_name",
        "privileges",
        "job_id",
        "detail",
    )
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
