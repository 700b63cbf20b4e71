"""Request and response shapes of sessions, statements and jobs (../shared/API.md §2).

Input serializers check only the JSON shape; the services check the meaning.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog import serializers as catalog_serializers
from catalog.models import Table
from core.planner import parameters as query_parameters
from core.session_properties import IDLE_TIMEOUT_MAX_SECONDS, WAIT_MAX_SECONDS
from jobs.models import Job, JobEvent, Session, TemporaryObject
from jobs.selectors import ResultPage
from sessions.names import Resolved
from webapp.pagination import MAX_PAGE_SIZE, encode_page_token

PROGRESS_DEFAULT: dict[str, Any] = {
    "stages_total": 0,
    "stages_done": 0,
    "tasks_total": 0,
    "tasks_done": 0,
    "stages": None,
}


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
        value: str = serializers.DateTimeField().to_representation(obj.expires_at)
        return value


class SessionCreatedOut(SessionOut):
    started_in = serializers.ChoiceField(
        choices=["requested", "last_used", "user_default", "server_default", "none"],
        help_text="Where the session's catalog came from.",
    )


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
    user = serializers.SerializerMethodField()
    sql = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
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


class ColumnOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    data_type = serializers.CharField()


class ResultPageOut(serializers.Serializer[Any]):
    columns = ColumnOut(many=True)
    rows = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()))
    next_page_token = serializers.CharField(allow_null=True)
    row_count = serializers.IntegerField(
        help_text="rows of the whole result, sorted and filtered as asked"
    )


class ChartXOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["number", "time", "text"])


class ChartSeriesOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    values = serializers.ListField(child=serializers.FloatField(allow_null=True))


class ResultChartOut(serializers.Serializer[Any]):
    x_column = ChartXOut()
    aggregation = serializers.CharField()
    rows = serializers.IntegerField(help_text="rows of the (filtered) result charted")
    binned = serializers.BooleanField(help_text="X was cut into equal-width bins")
    bin_width = serializers.FloatField(
        allow_null=True, help_text="in X's units: numbers, days (DATE), microseconds"
    )
    sampled = serializers.BooleanField(help_text="aggregation none: rows evenly sampled")
    groups = serializers.IntegerField(help_text="distinct X values (or bins) found")
    omitted_groups = serializers.IntegerField(help_text="text X: smaller groups left out")
    x = serializers.ListField(child=serializers.JSONField())
    series = ChartSeriesOut(many=True)


class ScriptJobsOut(serializers.Serializer[Any]):
    jobs = JobOut(many=True)


def session_out(session: Session) -> dict[str, Any]:
    return dict(SessionOut(session).data)


def job_out(job: Job) -> dict[str, Any]:
    return dict(JobOut(job).data)


def event_out(event: JobEvent) -> dict[str, Any]:
    return dict(EventOut(event).data)


def result_page_out(page: ResultPage) -> dict[str, Any]:
    """``{"columns", "rows", "next_page_token"}``; rows as the results store gives them."""
    following = page.next
    return {
        "columns": page.columns,
        "rows": page.rows,
        "next_page_token": encode_page_token(following) if following is not None else None,
        "row_count": page.row_count,
    }


# --- temporary objects -----------------------------------------------------------------------


def temporary_object_out(row: TemporaryObject) -> dict[str, Any]:
    """A temporary object in the shape of the catalog API's table/view/function JSON, with
    ``"temporary": true``. A temporary table is always external (``managed`` false); a
    temporary system function has ``"system": true`` and null catalog and database."""
    definition: dict[str, Any] = dict(row.definition or {})
    created_at = serializers.DateTimeField().to_representation(row.created_at)
    body: dict[str, Any] = {
        "catalog": row.catalog or None,
        "database": row.database or None,
        "name": row.name,
        "kind": row.kind,
        "comment": str(definition.get("comment") or ""),
    }
    if row.kind == TemporaryObject.KIND_TABLE:
        body.update(
            managed=False,
            options=dict(definition.get("options") or {}),
            schema=definition.get("schema"),
            resolved_schema=definition.get("resolved_schema"),
            partition_by=list(definition.get("partition_by") or []),
            status="active",
        )
    elif row.kind == TemporaryObject.KIND_VIEW:
        body.update(
            query=str(definition.get("query") or ""),
            expanded_query=definition.get("expanded_query"),
            schema=definition.get("schema"),
            resolved_schema=definition.get("resolved_schema"),
        )
    else:
        body.update(
            system=row.system,
            language=str(definition.get("language") or ""),
            implementation=str(definition.get("implementation") or ""),
            parameters=list(definition.get("parameters") or []),
            return_type=str(definition.get("return_type") or ""),
        )
    body.update(
        temporary=True,
        created_at=created_at,
        created_by_job=str(row.created_by_job_id) if row.created_by_job_id else None,
    )
    return body


def temporary_item_out(item: tuple[TemporaryObject, bool]) -> dict[str, Any]:
    """A list item: the object and whether it shadows a permanent one (or a built-in)."""
    row, shadows = item
    return {**temporary_object_out(row), "shadows": shadows}


def resolved_out(resolved: Resolved) -> dict[str, Any]:
    """``GET /sessions/{id}/resolve``: ``{"identifier", "temporary", "object"}``."""
    if resolved.builtin is not None:
        return builtin_out(resolved.builtin)
    found = resolved.found
    assert found is not None
    if isinstance(found, TemporaryObject):
        return {
            "identifier": list(found.parts),
            "temporary": True,
            "object": temporary_object_out(found),
        }
    identifier = [found.database.catalog.name, found.database.name, found.name]
    if isinstance(found, Table):
        body = catalog_serializers.table_out(found)
    else:
        body = dict(catalog_serializers.FunctionOut(found).data)
    return {"identifier": identifier, "temporary": False, "object": {**body, "temporary": False}}


def builtin_out(name: str) -> dict[str, Any]:
    """A one-part function name that resolves to a Spark built-in."""
    return {
        "identifier": [name],
        "temporary": False,
        "object": {"name": name, "kind": "function", "builtin": True, "temporary": False},
    }


class TemporaryObjectOut(serializers.Serializer[Any]):
    """For the OpenAPI schema: fields beyond these follow the object's kind (table, view,
    function) as in the catalog API."""

    catalog = serializers.CharField(allow_null=True)
    database = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    kind = serializers.CharField()
    comment = serializers.CharField()
    temporary = serializers.BooleanField()
    shadows = serializers.BooleanField(required=False)
    created_at = serializers.DateTimeField()
    created_by_job = serializers.UUIDField(allow_null=True)


class ResolvedOut(serializers.Serializer[Any]):
    found = serializers.BooleanField(required=False, help_text="with ?missing=ok only")
    identifier = serializers.ListField(child=serializers.CharField(), allow_null=True)
    temporary = serializers.BooleanField()
    object = serializers.DictField(allow_null=True)
    message = serializers.CharField(required=False, help_text="why nothing was found")


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
        max_value=IDLE_TIMEOUT_MAX_SECONDS,
        help_text="Seconds of disuse after which the session expires (default: the server's).",
    )


class SessionCreateIn(SessionIn):
    start = serializers.ChoiceField(
        choices=["empty", "workspace"],
        required=False,
        default="empty",
        help_text="Without current_catalog: 'workspace' starts where the user last moved a "
        "session, else in their default, else in the server's (started_in says which).",
    )


class SessionPatch(SessionIn):
    pass


class WorkspaceOut(serializers.Serializer[Any]):
    default_catalog = serializers.CharField(allow_null=True)
    default_database = serializers.CharField(allow_null=True)
    last_catalog = serializers.CharField(allow_null=True)
    last_database = serializers.CharField(allow_null=True)
    server_default_catalog = serializers.SerializerMethodField()

    def get_server_default_catalog(self, obj: Any) -> str | None:
        from django.conf import settings

        return settings.TESSERA_DEFAULT_CATALOG or None


class WorkspaceIn(serializers.Serializer[Any]):
    default_catalog = _name(required=False)
    default_database = _name(required=False)


@extend_schema_field({"type": "integer", "minimum": 1})
class _RowLimitField(serializers.JSONField):
    """Any JSON value: ``sessions.statements.check_row_limit`` judges it and names the range."""


class StatementIn(serializers.Serializer[Any]):
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True)
    wait = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=WAIT_MAX_SECONDS,
        help_text="Hold the answer until the job ended or this many seconds passed.",
    )
    script = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Run every statement of the text, in order, one job each.",
    )
    parameters = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        allow_null=True,
        help_text="Values of the query's :name markers (string, number, boolean or null), "
        "bound by Spark as literals, never written into the SQL text.",
    )
    row_limit = _RowLimitField(
        required=False,
        allow_null=True,
        help_text="The most rows this statement's result keeps, 1 … the server's "
        "TESSERA_RESULT_DOWNLOAD_MAX_ROWS; instead of the session's result.max_rows. Past it "
        "the result is truncated (result.truncated). For programs that read whole results "
        "(GET /jobs/{id}/result.arrow).",
    )
    page_size = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_PAGE_SIZE,
        help_text="With wait: when the job has FINISHED, the answer carries the first page "
        "of its result (result_page), as GET /jobs/{id}/result?page_size= would give it.",
    )
