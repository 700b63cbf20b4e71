"""Response shapes of jobs: the job, its progress and its events; the engines that run them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.planner import parameters as query_parameters
from jobs.models import Engine, Job, JobEvent

PROGRESS_DEFAULT: dict[str, Any] = {
    "stages_total": 0,
    "stages_done": 0,
    "tasks_total": 0,
    "tasks_done": 0,
    "stages": None,
}


class ScriptOut(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    index = serializers.IntegerField(help_text="0-based position of the statement")
    offset = serializers.IntegerField(
        help_text="Where the statement starts in the script's text, in Unicode code points"
    )


class StageOut(serializers.Serializer[Any]):
    """One attempt of a Spark stage of the job (``engine.stage_metrics``)."""

    stage_id = serializers.IntegerField()
    attempt = serializers.IntegerField()
    name = serializers.CharField(
        help_text="The Spark action that ran the stage (its call site without the place)"
    )
    status = serializers.CharField(help_text="COMPLETE, FAILED, ACTIVE or PENDING")
    tasks = serializers.IntegerField()
    tasks_completed = serializers.IntegerField()
    tasks_failed = serializers.IntegerField()
    rows_read = serializers.IntegerField(help_text="Input records read from tables and files")
    bytes_read = serializers.IntegerField(help_text="Input bytes read from tables and files")
    rows_written = serializers.IntegerField(help_text="Output records written")
    bytes_written = serializers.IntegerField(help_text="Output bytes written")
    shuffle_read_rows = serializers.IntegerField()
    shuffle_read_bytes = serializers.IntegerField()
    shuffle_write_rows = serializers.IntegerField()
    shuffle_write_bytes = serializers.IntegerField()
    memory_spilled = serializers.IntegerField(help_text="Bytes spilled, as they were in memory")
    disk_spilled = serializers.IntegerField(help_text="Bytes spilled, as written on disk")
    duration_ms = serializers.IntegerField(
        allow_null=True, help_text="Submission to completion (null: not completed)"
    )
    run_time_ms = serializers.IntegerField(help_text="Executor run time, summed over tasks")
    failure = serializers.CharField(allow_null=True, help_text="First line of why it failed")


class StreamProgressOut(serializers.Serializer[Any]):
    batch_id = serializers.IntegerField(help_text="The latest micro-batch's number.")
    batches = serializers.IntegerField(help_text="Micro-batches committed by this job.")
    input_rows_per_second = serializers.FloatField()
    processed_rows_per_second = serializers.FloatField()
    batch_duration_ms = serializers.IntegerField()
    num_input_rows = serializers.IntegerField(help_text="Rows read by the latest micro-batch.")
    watermark = serializers.CharField(
        allow_null=True, help_text="The event-time watermark (ISO-8601, UTC), once there is one."
    )
    rows_committed = serializers.IntegerField(help_text="Rows this job committed so far.")
    target_rows = serializers.IntegerField(
        allow_null=True, help_text="Rows in the target table after the latest commit."
    )
    updated_at = serializers.CharField()


class ProgressOut(serializers.Serializer[Any]):
    stages_total = serializers.IntegerField()
    stages_done = serializers.IntegerField()
    tasks_total = serializers.IntegerField()
    tasks_done = serializers.IntegerField()
    stages = StageOut(
        many=True,
        allow_null=True,
        help_text=(
            "Metrics of each Spark stage, recorded when the job's Spark work ended (at most "
            "100; skipped stages left out). Null while it runs, for jobs without Spark "
            "work, and on the Spark Connect runtime."
        ),
    )
    stream = StreamProgressOut(
        required=False,
        help_text="Streaming jobs only (docs/streaming.md): the latest micro-batch's figures.",
    )


class JobOut(serializers.Serializer[Job]):
    id = serializers.UUIDField()
    session = serializers.UUIDField(source="session_id", allow_null=True)
    parent = serializers.UUIDField(  # type: ignore[assignment]  # (a declared field)
        source="parent_id",
        allow_null=True,
        help_text="The pipeline job that ran this statement (null for any other job).",
    )
    engine = serializers.UUIDField(
        source="engine_id",
        allow_null=True,
        help_text="The engine (GET /engines/{id}) it ran on; null until a worker runs it, for "
        "statements that need no Spark, and under the share level server.",
    )
    user = serializers.SerializerMethodField()
    sql = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
    origin = serializers.CharField(
        help_text='Who submitted it: "user" (a statement), or "schedule" (a scheduled run, '
        "as the schedule's owner; GET /schedules/{id}/runs)."
    )
    target = serializers.ListField(child=serializers.CharField(), allow_null=True)
    progress = serializers.SerializerMethodField()
    streaming = serializers.SerializerMethodField(
        help_text="A long-running stream (execution.runtime-mode = streaming): RUNNING until "
        "it is cancelled or fails."
    )
    error = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    result = serializers.JSONField(allow_null=True)
    parameters = serializers.SerializerMethodField(
        help_text="The values its :name markers were run with ({} for none)."
    )
    script = serializers.SerializerMethodField(
        help_text=(
            "Only for statements of a script: the script's id, this one's index and its "
            "offset in the script's text (in Unicode code points)."
        )
    )

    def get_user(self, obj: Job) -> str:
        return obj.user.get_username()

    @extend_schema_field(ProgressOut)
    def get_progress(self, obj: Job) -> dict[str, Any]:
        return {**PROGRESS_DEFAULT, **(obj.progress or {})}

    @extend_schema_field(serializers.BooleanField())
    def get_streaming(self, obj: Job) -> bool:
        args = (obj.plan or {}).get("args") or {}
        return isinstance(args, dict) and bool(args.get("streaming"))

    @extend_schema_field(serializers.DictField(child=serializers.JSONField(allow_null=True)))
    def get_parameters(self, obj: Job) -> dict[str, Any]:
        args = (obj.plan or {}).get("args") or {}
        values = args.get("parameters") if isinstance(args, dict) else None
        return query_parameters.shown(values) if isinstance(values, dict) else {}

    @extend_schema_field(ScriptOut(allow_null=True))
    def get_script(self, obj: Job) -> dict[str, Any] | None:
        if obj.script_id is None:
            return None
        return {"id": str(obj.script_id), "index": obj.script_index, "offset": obj.script_offset}

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if data.get("script") is None:
            data.pop("script", None)
        return data


class EventOut(serializers.Serializer[JobEvent]):
    at = serializers.DateTimeField()
    type = serializers.CharField()
    detail = serializers.JSONField()


def job_out(job: Job) -> dict[str, Any]:
    return dict(JobOut(job).data)


def event_out(event: JobEvent) -> dict[str, Any]:
    return dict(EventOut(event).data)


class EngineOut(serializers.Serializer[Engine]):
    """An engine (docs/api.md §6, "Engines"): one Spark application for one share key."""

    id = serializers.UUIDField()
    share_level = serializers.CharField(help_text="user, team or server")
    share_key = serializers.CharField(
        help_text="user:<id>, team:<group>, server; '' for a spare not assigned yet"
    )
    owner = serializers.SerializerMethodField(
        help_text="Whose it is: the username (user:<id>), the group (team:<group>), "
        "'everyone' (server); null for a spare."
    )
    runtime = serializers.CharField()
    state = serializers.ChoiceField(choices=Engine.STATE_CHOICES)
    pid = serializers.IntegerField(allow_null=True)
    driver_memory = serializers.CharField()
    started_at = serializers.DateTimeField()
    ready_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    stopped_at = serializers.DateTimeField(allow_null=True)
    stop_reason = serializers.CharField(
        help_text="Why it stopped: idle, evicted, restart, stop, lost, shutdown, failed_start; "
        "'' while it runs."
    )
    stop_message = serializers.CharField()
    running_jobs = serializers.IntegerField(help_text="Its jobs that are RUNNING now.")
    uptime_seconds = serializers.SerializerMethodField(
        help_text="Seconds since it became ready (until it stopped); null if it never was."
    )
    stop_requested = serializers.CharField(
        help_text="'restart' or 'stop' once asked (its worker acts on it), else ''."
    )
    stop_requested_by = serializers.CharField(help_text="Who asked it to stop ('' for none).")

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_owner(self, obj: Engine) -> str | None:
        owners: Mapping[str, str | None] = self.context.get("owners", {})
        return owners.get(obj.share_key, obj.share_key or None)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_uptime_seconds(self, obj: Engine) -> int | None:
        if obj.ready_at is None:
            return None
        now: datetime = self.context.get("now") or timezone.now()
        end = obj.stopped_at or now
        return max(0, int((end - obj.ready_at).total_seconds()))


def engines_out(rows: Sequence[Engine], owners: Mapping[str, str | None]) -> list[Any]:
    """Engines in the REST shape (``owners``: ``selectors.engine_owners`` of the rows)."""
    many: type[serializers.Serializer[Any]] = EngineOut  # one serializer for the page
    context = {"owners": owners, "now": timezone.now()}
    return list(many(rows, many=True, context=context).data)
