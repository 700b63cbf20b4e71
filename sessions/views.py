"""Sessions, statements and jobs REST endpoints. Thin: parse, call one service, serialize."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.access import access_for
from core import jobstate
from core.errors import CoreError, NotFound
from core.session_properties import check_wait
from jobs import selectors
from results import queries
from sessions import names, scripts, services, statements, temporary_objects, workspace
from sessions import serializers as s
from webapp.api import PAGE_PARAMS, valid_body
from webapp.pagination import page_body, page_request


def _page_of(name: str, item: serializers.Serializer[Any]) -> serializers.Serializer[Any]:
    return inline_serializer(
        name=name,
        fields={"items": item, "next_page_token": serializers.CharField(allow_null=True)},
    )


# --- sessions --------------------------------------------------------------------------------


class SessionListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS, responses=_page_of("SessionPage", s.SessionOut(many=True))
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        rows = services.session_list(user=request.user, after=page.after, limit=page.size + 1)
        return Response(page_body(rows, page, selectors.keyset_token, s.session_out))

    @extend_schema(request=s.SessionCreateIn, responses={201: s.SessionCreatedOut})
    def post(self, request: Request) -> Response:
        body = valid_body(s.SessionCreateIn, request)
        start = body.pop("start", "empty")
        session, started_in = services.session_open(user=request.user, start=start, **body)
        return Response({**s.session_out(session), "started_in": started_in}, status=201)


class SessionDetailView(APIView):
    @extend_schema(responses=s.SessionOut)
    def get(self, request: Request, session: str) -> Response:
        return Response(s.session_out(services.session_get(user=request.user, session_id=session)))

    @extend_schema(request=s.SessionPatch, responses=s.SessionOut)
    def patch(self, request: Request, session: str) -> Response:
        changes = valid_body(s.SessionPatch, request)
        found = services.session_get(user=request.user, session_id=session)
        return Response(s.session_out(services.session_update(session=found, changes=changes)))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, session: str) -> Response:
        found = services.session_get(user=request.user, session_id=session, touch=False)
        services.session_delete(session=found)
        return Response(status=204)


class StatementView(APIView):
    @extend_schema(
        request=s.StatementIn,
        responses={
            201: OpenApiResponse(
                s.JobOut,
                description='The job; with "script": true, {"jobs": [job, …]}. With '
                '"page_size", a job that has FINISHED also carries "result_page": '
                '{"columns", "rows", "next_page_token"}.',
            )
        },
    )
    def post(self, request: Request, session: str) -> Response:
        # Too long a statement is refused before the body's own checks walk it character by
        # character; tokens and nesting are checked in the user's planning slot.
        statements.check_statement_size(request.data)
        data = valid_body(s.StatementIn, request)
        found = services.session_get(user=request.user, session_id=session)
        if data["script"]:
            if data.get("parameters"):
                raise CoreError(
                    "Parameters can only be sent with one statement, not with a script.",
                    details={"field": "parameters"},
                )
            if data.get("row_limit") is not None:
                raise CoreError(
                    "A row_limit can only be sent with one statement, not with a script.",
                    details={"field": "row_limit"},
                )
            jobs = scripts.script_submit(session=found, sql=data["sql"], wait=data.get("wait"))
            return Response({"jobs": [s.job_out(job) for job in jobs]}, status=201)
        job = statements.statement_submit(
            session=found,
            sql=data["sql"],
            wait=data.get("wait"),
            parameters=data.get("parameters"),
            row_limit=data.get("row_limit"),
        )
        body = s.job_out(job)
        if data.get("page_size") and job.status == jobstate.FINISHED and job.result:
            # The first page in the same answer (as Databricks' statement API does): a client
            # that waited needs no second request to show the rows.
            page = selectors.job_result_page(job=job, after=None, limit=data["page_size"])
            body["result_page"] = s.result_page_out(page)
        return Response(body, status=201)


class WorkspaceView(APIView):
    @extend_schema(responses=s.WorkspaceOut)
    def get(self, request: Request) -> Response:
        return Response(s.WorkspaceOut(workspace.workspace_of(request.user)).data)

    @extend_schema(request=s.WorkspaceIn, responses=s.WorkspaceOut)
    def patch(self, request: Request) -> Response:
        changes = valid_body(s.WorkspaceIn, request)
        found = workspace.workspace_update(user=request.user, changes=changes)
        return Response(s.WorkspaceOut(found).data)


# --- temporary objects -----------------------------------------------------------------------


class TemporaryObjectListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=_page_of("TemporaryObjectPage", s.TemporaryObjectOut(many=True)),
        description="The session's temporary tables, views or functions, by identifier.",
    )
    def get(self, request: Request, session: str, kinds: str) -> Response:
        page = page_request(request)
        found = services.session_get(user=request.user, session_id=session)
        rows = temporary_objects.temporary_list(
            session=found, kinds=kinds, after=page.after, limit=page.size + 1
        )
        return Response(
            page_body(
                rows,
                page,
                lambda item: temporary_objects.temporary_token(item[0]),
                s.temporary_item_out,
            )
        )


class TemporaryObjectDetailView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "system", bool, description="functions: a temporary system function (1 part)"
            )
        ],
        responses={204: None},
        description="Drop a temporary object by its SQL path (percent-encoded), like "
        "DROP TEMPORARY …; 1- and 2-part paths expand with the session's current catalog "
        "and database.",
    )
    def delete(self, request: Request, session: str, kinds: str, path: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        system = request.query_params.get("system", "").lower() in ("1", "true", "yes")
        temporary_objects.temporary_delete(session=found, kinds=kinds, path=path, system=system)
        return Response(status=204)


class ResolveView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("path", str, required=True, description="a SQL path, e.g. c.d.t"),
            OpenApiParameter("kind", str, description="table (default; views too) or function"),
            OpenApiParameter(
                "missing",
                str,
                enum=["ok"],
                description="ok: a path that names nothing is 200 {found: false}, not 404 "
                "(for lookups while a path is typed)",
            ),
        ],
        responses=s.ResolvedOut,
        description="What the path names in this session, temporary objects first.",
    )
    def get(self, request: Request, session: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        params = request.query_params
        lookup = params.get("missing") == "ok"
        try:
            resolved = names.resolve(
                session=found, path=params.get("path"), kind=params.get("kind") or "table"
            )
        except NotFound as exc:
            if not lookup:
                raise
            # A lookup as the user types: nothing there yet is an answer, not an error.
            missing = {"found": False, "identifier": None, "temporary": False, "object": None}
            return Response({**missing, "message": exc.message})
        body = s.resolved_out(resolved)
        return Response({"found": True, **body} if lookup else body)


# --- jobs ------------------------------------------------------------------------------------


class JobListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter("session", str, description="only this session's jobs"),
            OpenApiParameter("status", str, description="CREATED, RUNNING, … (comma list)"),
            OpenApiParameter("kind", str, description="query, ddl, show, … (comma list)"),
            OpenApiParameter(
                "created_after", str, description="ISO-8601; jobs created at or after it"
            ),
            OpenApiParameter("created_before", str, description="ISO-8601; jobs created before it"),
            OpenApiParameter("q", str, description="a case-insensitive part of the SQL"),
        ],
        responses=_page_of("JobPage", s.JobOut(many=True)),
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        params = request.query_params
        rows = selectors.job_list(
            user=request.user,
            session=params.get("session"),
            status=params.get("status"),
            kind=params.get("kind"),
            created_after=params.get("created_after"),
            created_before=params.get("created_before"),
            q=params.get("q"),
            after=page.after,
            limit=page.size + 1,
        )
        return Response(page_body(rows, page, selectors.keyset_token, s.job_out))


def _wait_param(request: Request) -> float:
    raw = request.query_params.get("wait")
    if raw is None or raw == "":
        return 0.0
    try:
        value: Any = float(raw)
    except ValueError:
        value = raw
    return check_wait(value)


def _etag(header: str | None) -> str | None:
    """The version an ``If-None-Match`` names (``"v"`` or ``W/"v"``; the first of a list)."""
    if not header:
        return None
    first = header.split(",")[0].strip()
    if first.startswith("W/"):
        first = first[2:]
    return first.strip('"') or None


class JobDetailView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "wait",
                float,
                description="With If-None-Match: hold the answer up to this many seconds "
                "(0..30) until the job differs from that version; 304 if it did not change.",
            ),
            OpenApiParameter(
                "If-None-Match",
                str,
                location=OpenApiParameter.HEADER,
                description="The ETag of the job as last seen.",
            ),
        ],
        responses={200: s.JobOut, 304: OpenApiResponse(description="Not changed.")},
    )
    def get(self, request: Request, job: str) -> Response:
        wait = _wait_param(request)
        known = _etag(request.headers.get("If-None-Match"))
        found = selectors.job_wait_change(user=request.user, job_id=job, known=known, seconds=wait)
        version = selectors.job_version(found)
        headers = {"ETag": f'"{version}"', "Cache-Control": "no-cache"}
        if known == version:
            return Response(status=304, headers=headers)
        return Response(s.job_out(found), headers=headers)


class JobCancelView(APIView):
    @extend_schema(request=None, responses=s.JobOut)
    def post(self, request: Request, job: str) -> Response:
        found = selectors.job_get(user=request.user, job_id=job)
        return Response(s.job_out(statements.job_cancel(user=request.user, job=found)))


class JobEventsView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS, responses=_page_of("JobEventPage", s.EventOut(many=True))
    )
    def get(self, request: Request, job: str) -> Response:
        page = page_request(request)
        found = selectors.job_get(user=request.user, job_id=job)
        rows = selectors.job_events(job=found, after=page.after, limit=page.size + 1)
        return Response(page_body(rows, page, lambda event: event.pk, s.event_out))


_VIEW_PARAMS = [
    OpenApiParameter(
        "sort",
        str,
        description="<column>:asc or <column>:desc, over the whole result (NULLs last)",
    ),
    OpenApiParameter(
        "filter",
        str,
        many=True,
        description="<column>:<op>[:<value>], repeatable (all must hold); op: contains, eq, "
        "ne, lt, le, gt, ge (or = != < <= > >=), is_null, not_null",
    ),
]


class JobResultView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter(
                "offset", int, description="the first row to return (instead of page_token)"
            ),
            *_VIEW_PARAMS,
        ],
        responses=s.ResultPageOut,
    )
    def get(self, request: Request, job: str) -> Response:
        page = page_request(request)
        params = request.query_params
        found = selectors.job_get(user=request.user, job_id=job)
        result = selectors.job_result_page(
            job=found,
            after=page.after,
            limit=page.size,
            offset=params.get("offset"),
            sort=params.get("sort"),
            filters=params.getlist("filter"),
        )
        return Response(s.result_page_out(result))


class JobResultChartView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("x", str, description="the X column"),
            OpenApiParameter("y", str, many=True, description="Y columns (numeric), repeatable"),
            OpenApiParameter(
                "aggregation",
                str,
                enum=list(queries.AGGREGATIONS),
                description="how rows with the same X (or X bin) make one point; "
                "none: the rows themselves, sampled (default)",
            ),
            OpenApiParameter(
                "points",
                int,
                description=f"at most this many points, 2..{queries.MAX_POINTS}, "
                f"default {queries.DEFAULT_POINTS}",
            ),
            _VIEW_PARAMS[1],
        ],
        responses=s.ResultChartOut,
        description="A chart's points over the whole result: rows grouped by X (numeric and "
        "time X cut into equal bins when they have more values than points) and Y aggregated.",
    )
    def get(self, request: Request, job: str) -> Response:
        params = request.query_params
        found = selectors.job_get(user=request.user, job_id=job)
        body = selectors.job_result_chart(
            job=found,
            x=params.get("x"),
            y=params.getlist("y"),
            aggregation=params.get("aggregation"),
            points=params.get("points"),
            filters=params.getlist("filter"),
        )
        return Response(body)


class _AnyContent(BaseContentNegotiation):
    """Downloads answer in their own format whatever the client's Accept header says."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class JobResultDownloadView(APIView):
    content_negotiation_class = _AnyContent

    @extend_schema(
        responses={(200, "*/*"): OpenApiTypes.BINARY},
        description="The whole result: CSV (header row), JSON lines, Parquet, or Arrow "
        "(result.arrow: an Arrow IPC stream, application/vnd.apache.arrow.stream, in the "
        "types the result is stored in; headers X-Tessera-Row-Count and X-Tessera-Truncated: "
        "true|false).",
    )
    def get(self, request: Request, job: str, fmt: str) -> HttpResponseBase:
        found = selectors.job_get(user=request.user, job_id=job)
        response: HttpResponseBase = selectors.job_result_download(job=found, fmt=fmt)
        return response


# --- completion ------------------------------------------------------------------------------

CompletionOut = inline_serializer(
    "Completion",
    {
        "label": serializers.CharField(),
        "insert": serializers.CharField(),
        "kind": serializers.ChoiceField(choices=names.KINDS),
        "detail": serializers.CharField(allow_blank=True),
        "identifier": serializers.ListField(child=serializers.CharField()),
        "staged": serializers.BooleanField(),
    },
)


class CompletionView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "path",
                str,
                description="the SQL path typed so far, e.g. demo.sa or `my cat`.`d",
            ),
            OpenApiParameter(
                "session",
                str,
                description="a session of yours: its current catalog/database and temporary "
                "objects count",
            ),
            OpenApiParameter(
                "limit",
                int,
                description=f"1..{names.MAX_LIMIT}, default {names.DEFAULT_LIMIT}",
            ),
        ],
        responses=inline_serializer(
            "CompletionList", {"items": serializers.ListField(child=CompletionOut)}
        ),
        description="Names that complete the last part of a SQL path: temporary objects "
        "first, then tables and views, functions, databases, catalogs.",
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        limit = names.limit_of(params.get("limit"))
        path = params.get("path") or ""
        current: Sequence[str | None] = (None, None)
        session_id = None
        if params.get("session"):
            session = services.session_get(
                user=request.user, session_id=params["session"], touch=False
            )
            current = (session.current_catalog, session.current_database)
            session_id = session.pk
        items = names.complete(
            path=path,
            current_catalog=current[0],
            current_database=current[1],
            access=access_for(request.user),
            session_id=session_id,
            limit=limit,
        )
        return Response({"items": [item.as_json() for item in items]})
