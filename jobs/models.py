"""Workers announce themselves here; a row whose heartbeat is fresh is a live worker."""

from __future__ import annotations

from typing import ClassVar

from django.db import models


class Worker(models.Model):
    hostname = models.CharField(max_length=255, unique=True)
    pid = models.IntegerField()
    started_at = models.DateTimeField()
    last_heartbeat = models.DateTimeField(db_index=True)

    class Meta:
        ordering: ClassVar = ["hostname"]

    def __str__(self) -> str:
        return self.hostname
