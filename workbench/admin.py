"""Django admin over saved queries (names keep their per-owner uniqueness through save())."""

from __future__ import annotations

from django.contrib import admin

from workbench.models import SavedQuery


@admin.register(SavedQuery)
class SavedQueryAdmin(admin.ModelAdmin[SavedQuery]):
    list_display = ("name", "owner", "shared", "updated_at")
    list_filter = ("shared",)
    search_fields = ("name_key", "description", "owner__username")
    readonly_fields = ("id", "created_at", "updated_at")
    fields = ("id", "name", "owner", "description", "sql", "shared", "created_at", "updated_at")
    raw_id_fields = ("owner",)
