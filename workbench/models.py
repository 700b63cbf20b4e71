"""The SQL workbench's own things: saved queries.

A saved query belongs to its owner. ``shared`` makes it readable (never writable) by every
user who shares a team (a Django group) with the owner. Names are case-preserving and unique
per owner case-insensitively (``name_key``, the lower-cased name, as in the catalog).
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models

MAX_NAME_LENGTH = 200


class SavedQuery(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_queries"
    )
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    name_key = models.CharField(max_length=MAX_NAME_LENGTH, editable=False)
    description = models.TextField(blank=True, default="")
    sql = models.TextField()
    shared = models.BooleanField(default=False)
    # How its result is charted: {"type", "x", "y": [...], "aggregation"} or null.
    chart = models.JSONField(null=True, blank=True, default=None)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "saved queries"
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["owner", "name_key"], name="saved_query_unique_name"),
        ]
        indexes: ClassVar = [
            # Lists are ordered by (name_key, id); others' shared queries are found by owner.
            models.Index(fields=["name_key", "id"], name="saved_query_order_idx"),
            models.Index(
                fields=["owner", "name_key", "id"],
                condition=models.Q(shared=True),
                name="saved_query_shared_idx",
            ),
        ]
        ordering: ClassVar = ["name_key", "id"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: object, **kwargs: object) -> None:
        self.name_key = self.name.lower()
        super().save(*args, **kwargs)  # type: ignore[arg-type]
