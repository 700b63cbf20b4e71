"""Dashboards: a grid of tiles, each a saved query's table or chart, with parameters shared
by every tile and a refresh interval.

A dashboard belongs to its owner. ``shared`` makes it readable (never writable) by every
user who shares a team with the owner, as a saved query is. Its tiles run as the viewer:
the viewer's grants decide what each tile may read (``dashboards.services.tile_run``).
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models

from workbench.models import SavedQuery

# The column's size; TESSERA_DASHBOARD_TITLE_MAX_CHARS may only lower it (dashboards.limits).
MAX_TITLE_LENGTH = 200
GRID_COLUMNS = 12
KINDS = ("table", "chart")


class Dashboard(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dashboards"
    )
    title = models.CharField(max_length=MAX_TITLE_LENGTH)
    shared = models.BooleanField(default=False)
    # Seconds between automatic refreshes in the browser; null: only by hand.
    refresh_interval_seconds = models.IntegerField(null=True, blank=True)
    # [{"name", "default"}]: the parameters every tile's :name markers take their values from.
    parameters = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [
            models.Index(fields=["owner", "created_at", "id"], name="dashboard_owner_idx"),
        ]

    def __str__(self) -> str:
        return self.title


class Tile(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    dashboard = models.ForeignKey(Dashboard, on_delete=models.CASCADE, related_name="tiles")
    saved_query = models.ForeignKey(SavedQuery, on_delete=models.CASCADE, related_name="tiles")
    kind = models.CharField(max_length=10, choices=[(k, k) for k in KINDS], default="table")
    # A chart config as a saved query's ({"type", "x", "y", "aggregation"}); null: the query's.
    chart = models.JSONField(null=True, blank=True, default=None)
    # Its place on a 12-column grid: column x (0-based), row y, w columns wide, h rows high.
    x = models.IntegerField(default=0)
    y = models.IntegerField(default=0)
    w = models.IntegerField(default=6)
    h = models.IntegerField(default=4)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["y", "x", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} of {self.saved_query_id}"
