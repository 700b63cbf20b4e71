"""Sessions, jobs and their events; workers' heartbeats.

The job row is the single source of truth for a statement's life: status, progress, error,
result metadata. Celery only carries job ids.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models

from core import jobstate


class Worker(models.Model):
    hostname = models.CharField(max_length=255, unique=True)
    pid = models.IntegerField()
    started_at = models.DateTimeField()
    last_heartbeat = models.DateTimeField(db_index=True)

    class Meta:
        ordering: ClassVar = ["hostname"]

    def __str__(self) -> str:
        return self.hostname


class Session(models.Model):
    """A user's SQL session: current catalog/database, properties, (later) temporary objects."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sql_sessions"
    )
    current_catalog = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    current_database = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    properties = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(db_index=True)
    idle_timeout_seconds = models.PositiveIntegerField()

    class Meta:
        ordering: ClassVar = ["-created_at"]

    def __str__(self) -> str:
        return str(self.id)


class Job(models.Model):
    STATUS_CHOICES: ClassVar = [(s, s) for s in jobstate.STATUSES]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    sql = models.TextField()
    kind = models.CharField(max_length=16)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=jobstate.CREATED)
    target = models.JSONField(null=True, blank=True)
    plan = models.JSONField(default=dict)
    progress = models.JSONField(default=dict, blank=True)
    error = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    # Which worker runs it and when it last said so; the reaper fails jobs of dead workers.
    worker = models.CharField(max_length=255, blank=True, default="")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    timeout_seconds = models.PositiveIntegerField(default=3600)
    cancel_requested = models.BooleanField(default=False)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    enqueue_count = models.PositiveIntegerField(default=0)
    # Jobs of one script run in order: the next one starts when this one finishes.
    script_id = models.UUIDField(null=True, blank=True, db_index=True)
    script_index = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        indexes: ClassVar = [
            models.Index(fields=["user", "-created_at"], name="job_user_recent_idx"),
            models.Index(fields=["status", "created_at"], name="job_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.status}"


class JobEvent(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(auto_now_add=True)
    type = models.CharField(max_length=64)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering: ClassVar = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.type} at {self.at}"
