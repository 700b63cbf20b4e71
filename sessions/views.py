"""Sessions, statements, temporary objects and name completion REST endpoints. Thin: parse,
call one service, serialize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.access import access_for
from core import jobstate
from core.errors import CoreError, NotFound
from jobs import selectors
from jobs import serializers as job_s
from results import selectors as result_selectors
from sessions import names, scripts, services, statements, temporary_objects, workspace
from sessions import serializers as s
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request

# --- sessions --------------------------------------------------------------------------------


class SessionListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS, responses=page_of("SessionPage", s.SessionOut(many=True))
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
        created = s.SessionCreatedOut(session, context={"started_in": started_in})
        return Response(created.data, status=201)


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
                job_s.JobOut,
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
            return Response(s.ScriptJobsOut({"jobs": jobs}).data, status=201)
        job = statements.statement_submit(
            session=found,
            sql=data["sql"],
            wait=data.get("wait"),
            parameters=data.get("parameters"),
            row_limit=data.get("row_limit"),
        )
        context: dict[str, Any] = {}
        if data.get("page_size") and job.status == jobstate.FINISHED and job.result:
            # The first page in the same answer (as Databricks' statement API does): a client
            # that waited needs no second request to show the rows.
            context["result_page"] = result_selectors.job_result_page(
                job=job, after=None, limit=data["page_size"]
            )
        return Response(s.StatementJobOut(job, context=context).data, status=201)


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
        responses=page_of("TemporaryObjectPage", s.TemporaryObjectOut(many=True)),
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
            return Response(s.ResolvedOut({**missing, "message": exc.message}).data)
        body = s.resolved_out(resolved)
        return Response(s.ResolvedOut({"found": True, **body} if lookup else body).data)


# --- completion ------------------------------------------------------------------------------


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
        responses=s.CompletionListOut,
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
        return Response(s.CompletionListOut({"items": items}).data)
