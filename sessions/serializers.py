"""Request and response shapes of sessions, statements, temporary objects and the workspace
(docs/api.md §2).

Input serializers check only the JSON shape; the services check the meaning.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from catalog import serializers as catalog_serializers
from catalog.models import Table
from core.session_properties import IDLE_TIMEOUT_MAX_SECONDS, WAIT_MAX_SECONDS
from jobs.models import Session, TemporaryObject
from jobs.serializers import JobOut
from results.serializers import ResultPageOut
from sessions import names
from sessions.names import Resolved
from webapp.api import FromContext
from webapp.pagination import MAX_PAGE_SIZE

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


class _StartedIn(FromContext, serializers.ChoiceField):
    pass


class SessionCreatedOut(SessionOut):
    # The view hands ``started_in`` over in the context: the session does not keep it.
    started_in = _StartedIn(
        choices=["requested", "last_used", "user_default", "server_default", "personal", "none"],
        help_text="Where the session's catalog came from.",
    )


class ScriptJobsOut(serializers.Serializer[Any]):
    jobs = JobOut(many=True)


class _FirstPage(FromContext, ResultPageOut):
    pass


class StatementJobOut(JobOut):
    # The OpenAPI document names JobOut for POST …/statements and says in the response's
    # description that a FINISHED job asked for with page_size carries ``result_page``.
    result_page = _FirstPage(required=False)


@extend_schema_serializer(component_name="Completion")
class CompletionOut(serializers.Serializer[names.Completion]):
    label = serializers.CharField()  # type: ignore[assignment]  # (a declared field)
    insert = serializers.CharField()
    kind = serializers.ChoiceField(choices=names.KINDS)
    detail = serializers.CharField(allow_blank=True)
    identifier = serializers.ListField(child=serializers.CharField())
    staged = serializers.BooleanField()


@extend_schema_serializer(component_name="CompletionList")
class CompletionListOut(serializers.Serializer[Any]):
    items = serializers.ListField(child=CompletionOut())


def session_out(session: Session) -> dict[str, Any]:
    return dict(SessionOut(session).data)


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
        "session, else in their default, else in the server's, else in their personal catalog "
        "(started_in says which).",
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
