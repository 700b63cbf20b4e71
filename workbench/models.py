"""The SQL workbench's own things: saved queries, and each user's editor tabs.

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


MAX_TAB_TITLE_LENGTH = 200


class EditorTab(models.Model):
    """A tab of a user's SQL editor, kept on the server so every browser of the user sees it.

    ``version`` counts its writes: a change names the version it was made on, so a stale
    write (another browser changed the tab since) is refused instead of overwriting. At most
    one tab of a user is ``active``.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="editor_tabs"
    )
    title = models.CharField(max_length=MAX_TAB_TITLE_LENGTH)
    sql = models.TextField(blank=True, default="")
    position = models.IntegerField(default=0)
    active = models.BooleanField(default=False)
    # The saved query the tab is (Save updates it); gone with it.
    saved_query = models.ForeignKey(
        SavedQuery, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The tab's current catalog and database: null is "not set" (an empty name is no name).
    catalog = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    database = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    version = models.IntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["owner"], condition=models.Q(active=True), name="editor_tab_one_active"
            ),
        ]
        indexes: ClassVar = [
            models.Index(fields=["owner", "position", "created_at"], name="editor_tab_order_idx"),
        ]
        ordering: ClassVar = ["position", "created_at", "id"]

    def __str__(self) -> str:
        return self.title
