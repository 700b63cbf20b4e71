"""Django admin over dashboards and their tiles (read mostly: the API writes them)."""

from __future__ import annotations

from django.contrib import admin

from dashboards.models import Dashboard, Tile


@admin.register(Dashboard)
class DashboardAdmin(admin.ModelAdmin[Dashboard]):
    list_display = ("id", "owner", "title", "shared", "refresh_interval_seconds")


@admin.register(Tile)
class TileAdmin(admin.ModelAdmin[Tile]):
    list_display = ("id", "dashboard", "saved_query", "kind", "x", "y", "w", "h")
