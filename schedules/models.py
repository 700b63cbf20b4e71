"""Scheduled queries and alerts: a saved query run on a cron schedule in a time zone, as
its owner; each run a job; alerts on the first row of a run's result, and the in-app
notifications they make.

A run is claimed in the database (``schedules.scheduler``): ``ScheduleRun`` is unique per
(schedule, slot), so a slot is never run twice, whichever process claims it.
"""

from __future__ import annotations

import uuid
from typing import ClassVar

from django.conf import settings
from django.db import models

from jobs.models import Job, Session
from schedules.cron import MAX_CRON_LENGTH
from workbench.models import SavedQuery

MAX_TIMEZONE_LENGTH = 64
MAX_NAME_LENGTH = 200
MAX_COLUMN_LENGTH = 1000
MAX_VALUE_LENGTH = 1000

# An alert's operators: the first row's value compared with the alert's value.
OPERATORS = (">", ">=", "<", "<=", "=", "!=")
OK, TRIGGERED = "ok", "triggered"
# What a notification says happened to its alert.
KIND_TRIGGERED, KIND_CLEARED = "triggered", "cleared"
# A run's status: its job's, once the job ended (and FAILED when its alerts could not be
# evaluated); SUBMITTED while the job waits or runs.
SUBMITTED, FINISHED, FAILED, CANCELED = "SUBMITTED", "FINISHED", "FAILED", "CANCELED"
RUN_STATUSES = (SUBMITTED, FINISHED, FAILED, CANCELED)


class Schedule(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="schedules"
    )
    saved_query = models.ForeignKey(SavedQuery, on_delete=models.CASCADE, related_name="schedules")
    cron = models.CharField(max_length=MAX_CRON_LENGTH)
    timezone = models.CharField(max_length=MAX_TIMEZONE_LENGTH)
    enabled = models.BooleanField(default=True)
    # The next slot to run (UTC); null while disabled. The tick claims rows due by it.
    next_run_at = models.DateTimeField(null=True, blank=True)
    # The SQL session its runs use, while it lives (a new one when it expired).
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [
            models.Index(
                fields=["next_run_at"], condition=models.Q(enabled=True), name="schedule_due_idx"
            ),
            models.Index(fields=["owner", "created_at", "id"], name="schedule_owner_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.cron} ({self.timezone})"


class ScheduleRun(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="runs")
    # The cron slot it runs (UTC): at most one run per slot (the constraint below).
    scheduled_for = models.DateTimeField()
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=10, default=SUBMITTED)
    # {"code", "message", "details"?}: the job's error, or why the run made no job or its
    # alerts could not be evaluated.
    error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-scheduled_for"]
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["schedule", "scheduled_for"], name="schedule_run_once_per_slot"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.schedule_id} at {self.scheduled_for}"


class Alert(models.Model):
    STATE_CHOICES: ClassVar = [(OK, OK), (TRIGGERED, TRIGGERED)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="alerts")
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    column = models.CharField(max_length=MAX_COLUMN_LENGTH)
    operator = models.CharField(max_length=2, choices=[(o, o) for o in OPERATORS])
    value = models.CharField(max_length=MAX_VALUE_LENGTH)
    state = models.CharField(max_length=10, choices=STATE_CHOICES, default=OK)
    subscribers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="alert_subscriptions"
    )
    last_value = models.JSONField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]

    def __str__(self) -> str:
        return self.name


class Notification(models.Model):
    KIND_CHOICES: ClassVar = [(KIND_TRIGGERED, KIND_TRIGGERED), (KIND_CLEARED, KIND_CLEARED)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="notifications")
    run = models.ForeignKey(
        ScheduleRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=10, choices=KIND_CHOICES)
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]
        indexes: ClassVar = [
            models.Index(fields=["user", "-created_at", "-id"], name="notification_user_idx"),
            models.Index(
                fields=["user"], condition=models.Q(read_at=None), name="notification_unread_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.message[:60]}"
