"""Request and response shapes of /schedules, /alerts and /notifications. Inputs check the
JSON shape only; the services check meaning (and name the field in ``details.field``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from schedules.models import OPERATORS, RUN_STATUSES, Alert, Notification, Schedule, ScheduleRun


class ScheduleIn(serializers.Serializer[Any]):
    saved_query = serializers.CharField(help_text="The id of a saved query you may read.")
    cron = serializers.CharField(
        trim_whitespace=False,
        allow_blank=True,
        help_text="Five fields (minute hour day-of-month month day-of-week), or @hourly, …",
    )
    timezone = serializers.CharField(
        trim_whitespace=False, allow_blank=True, help_text="An IANA name: Europe/Paris, UTC."
    )
    enabled = serializers.BooleanField(required=False, default=True)


class SchedulePatch(serializers.Serializer[Any]):
    saved_query = serializers.CharField(required=False)
    cron = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    timezone = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    enabled = serializers.BooleanField(required=False)


class ScheduleOut(serializers.Serializer[Schedule]):
    id = serializers.UUIDField()
    saved_query = serializers.UUIDField(source="saved_query_id")
    saved_query_name = serializers.CharField(source="saved_query.name")
    owner = serializers.CharField(source="owner.username")
    cron = serializers.CharField()
    timezone = serializers.CharField()
    enabled = serializers.BooleanField()
    next_run_at = serializers.DateTimeField(
        allow_null=True, help_text="The next slot it runs (null while disabled)."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ScheduleRunOut(serializers.Serializer[ScheduleRun]):
    id = serializers.UUIDField()
    scheduled_for = serializers.DateTimeField(help_text="The cron slot this run is (UTC).")
    status = serializers.CharField(help_text=" | ".join(RUN_STATUSES))
    job = serializers.UUIDField(
        source="job_id",
        allow_null=True,
        help_text="The job it started (GET /jobs/{id}); null when it could start none.",
    )
    job_status = serializers.SerializerMethodField()
    error = serializers.JSONField(
        allow_null=True,
        help_text="Its job's error, why no job started, or ALERT_FAILED (an alert's column is "
        "not in the result).",
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_job_status(self, obj: ScheduleRun) -> str | None:
        return obj.job.status if obj.job is not None else None


class AlertIn(serializers.Serializer[Any]):
    schedule = serializers.CharField(help_text="The id of one of your schedules.")
    name = serializers.CharField(trim_whitespace=False, allow_blank=True)
    column = serializers.CharField(trim_whitespace=False, allow_blank=True)
    operator = serializers.CharField(help_text=f"One of {' '.join(OPERATORS)}.")
    value = serializers.JSONField(help_text="A number or a string.")
    subscribers = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_null=True,
        default=None,
        help_text="User names: you and your teammates (default: you).",
    )


class AlertPatch(serializers.Serializer[Any]):
    name = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    column = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    operator = serializers.CharField(required=False)
    value = serializers.JSONField(required=False)
    subscribers = serializers.ListField(child=serializers.CharField(), required=False)


class AlertOut(serializers.Serializer[Alert]):
    id = serializers.UUIDField()
    schedule = serializers.UUIDField(source="schedule_id")
    name = serializers.CharField()
    column = serializers.CharField()
    operator = serializers.CharField(help_text=" ".join(OPERATORS))
    value = serializers.CharField()
    state = serializers.CharField(help_text="ok | triggered")
    subscribers = serializers.SerializerMethodField()
    last_value = serializers.JSONField(allow_null=True)
    last_evaluated_at = serializers.DateTimeField(
        allow_null=True, help_text="The slot of the run that judged it last."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_subscribers(self, obj: Alert) -> list[str]:
        return sorted(user.get_username() for user in obj.subscribers.all())


class NotificationOut(serializers.Serializer[Notification]):
    id = serializers.UUIDField()
    alert = serializers.UUIDField(source="alert_id")
    alert_name = serializers.CharField(source="alert.name")
    run = serializers.UUIDField(source="run_id", allow_null=True)
    kind = serializers.CharField(help_text="triggered | cleared")
    message = serializers.CharField()
    created_at = serializers.DateTimeField()
    read_at = serializers.DateTimeField(allow_null=True)


class UnreadOut(serializers.Serializer[Any]):
    unread = serializers.IntegerField()


class ReadAllOut(serializers.Serializer[Any]):
    marked = serializers.IntegerField()
