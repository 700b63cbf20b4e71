"""Request and response shapes of sessions, statements and jobs (../shared/API.md §2).

Input serializers check only the JSON shape; the services check the meaning.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from jobs import services
from jobs.models import Job, JobEvent, Session

PROGRESS_DEFAULT = {"stages_total": 0, "stages_done": 0, "tasks_total": 0, "tasks_done": 0}


# --- responses -------------------------------------------------------------------------------


class SessionOut(serializers.Serializer[Session]):
    id = serializers.UUIDField()
    user = serializers.SerializerMethodField()
    current_catalog = serializers.CharField(allow_null=True)
    current_database = serializers.CharField(allow_null=True)
    properties = serializers.DictField(child=serializers.CharField())
    idle_timeout_seconds = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField()
    expires_at = serializers.SerializerMethodField()

    def get_user(self, obj: Session) -> str:
        return obj.user.get_username()

    def get_expires_at(self, obj: Session) -> str:
        value: str = serializers.DateTimeField().to_representation(services.session_expires_at(obj))
        return value


class ScriptOut(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    index = serializers.IntegerField(help_text="0-based position of the statement")


class JobOut(serializers.Serializer[Job]):
    id = serializers.UUIDField()
    session = serializers.UUIDField(source="session_id", allow_null=True)
    user = serializers.SerializerMethodField()
    sql = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
    target = serializers.ListField(child=serializers.CharField(), allow_null=True)
    progress = serializers.SerializerMethodField()
    error = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    result = serializers.JSONField(allow_null=True)
    script = serializers.SerializerMethodField(
        help_text="Only for statements of a script: the script's id and this one's index."
    )

    def get_user(self, obj: Job) -> str:
        return obj.user.get_username()

    def get_progress(self, obj: Job) -> dict[str, int]:
        return {**PROGRESS_DEFAULT, **(obj.progress or {})}

    def get_script(self, obj: Job) -> dict[str, Any] | None:
        if obj.script_id is None:
            return None
        return {"id": str(obj.script_id), "index": obj.script_index}

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if data.get("script") is None:
            data.pop("script", None)
        return data


class EventOut(serializers.Serializer[JobEvent]):
    at = serializers.DateTimeField()
    type = serializers.CharField()
    detail = serializers.JSONField()


class ColumnOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    data_type = serializers.CharField()


class ResultPageOut(serializers.Serializer[Any]):
    columns = ColumnOut(many=True)
    rows = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()))
    next_page_token = serializers.CharField(allow_null=True)


class ScriptJobsOut(serializers.Serializer[Any]):
    jobs = JobOut(many=True)


def session_out(session: Session) -> dict[str, Any]:
    return dict(SessionOut(session).data)


def job_out(job: Job) -> dict[str, Any]:
    return dict(JobOut(job).data)


def event_out(event: JobEvent) -> dict[str, Any]:
    return dict(EventOut(event).data)


# --- requests --------------------------------------------------------------------------------


def _name(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(max_length=255, trim_whitespace=False, allow_null=True, **kwargs)


class SessionIn(serializers.Serializer[Any]):
    current_catalog = _name(required=False)
    current_database = _name(required=False)
    properties = serializers.DictField(required=False)
    idle_timeout_seconds = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=30 * 86400,
        help_text="Seconds of disuse after which the session expires (default: the server's).",
    )


class SessionPatch(SessionIn):
    pass


class StatementIn(serializers.Serializer[Any]):
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True)
    wait = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=services.MAX_WAIT_SECONDS,
        help_text="Hold the answer until the job ended or this many seconds passed.",
    )
    script = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Run every statement of the text, in order, one job each.",
    )
