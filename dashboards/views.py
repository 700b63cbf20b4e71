"""/dashboards REST endpoints. Thin: parse, call one service or selector, serialize. A
dashboard nobody shared with the caller is NOT_FOUND; a viewer's change PERMISSION_DENIED."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core import jobstate
from dashboards import selectors, services
from dashboards import serializers as s
from dashboards.models import Dashboard
from results import selectors as result_selectors
from sessions.serializers import StatementJobOut
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request


def _out(request: Request, row: Dashboard) -> Any:
    return s.DashboardOut(row, context={"user_id": request.user.pk}).data


def _fresh(request: Request, row: Dashboard) -> Any:
    """The dashboard as it is now (its tiles read again after a change)."""
    return _out(request, selectors.dashboard_get(user=request.user, dashboard_id=row.pk))


class DashboardListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=page_of("DashboardPage", s.DashboardOut(many=True)),
        description="Your dashboards and those teammates shared, oldest first.",
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        rows = selectors.dashboard_list(user=request.user, after=page.after, limit=page.size + 1)
        return Response(
            page_body(
                rows,
                page,
                selectors.page_key,
                serialize_page=lambda shown: [_out(request, row) for row in shown],
            )
        )

    @extend_schema(request=s.DashboardIn, responses={201: s.DashboardOut})
    def post(self, request: Request) -> Response:
        row = services.dashboard_create(user=request.user, **valid_body(s.DashboardIn, request))
        return Response(_fresh(request, row), status=201)


class DashboardDetailView(APIView):
    @extend_schema(responses=s.DashboardOut)
    def get(self, request: Request, dashboard: str) -> Response:
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        return Response(_out(request, row))

    @extend_schema(request=s.DashboardPatch, responses=s.DashboardOut)
    def patch(self, request: Request, dashboard: str) -> Response:
        changes = valid_body(s.DashboardPatch, request)
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        services.dashboard_update(user=request.user, row=row, changes=changes)
        return Response(_fresh(request, row))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, dashboard: str) -> Response:
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        services.dashboard_delete(user=request.user, row=row)
        return Response(status=204)


class TileListView(APIView):
    @extend_schema(request=s.TileIn, responses={201: s.DashboardOut})
    def post(self, request: Request, dashboard: str) -> Response:
        values = valid_body(s.TileIn, request)
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        services.tile_create(user=request.user, dashboard=row, values=values)
        return Response(_fresh(request, row), status=201)


class TileDetailView(APIView):
    @extend_schema(request=s.TilePatch, responses=s.DashboardOut)
    def patch(self, request: Request, dashboard: str, tile: str) -> Response:
        changes = valid_body(s.TilePatch, request)
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        found = selectors.tile_get(dashboard=row, tile_id=tile)
        services.tile_update(user=request.user, dashboard=row, row=found, changes=changes)
        return Response(_fresh(request, row))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, dashboard: str, tile: str) -> Response:
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        found = selectors.tile_get(dashboard=row, tile_id=tile)
        services.tile_delete(user=request.user, dashboard=row, row=found)
        return Response(status=204)


class TileRunView(APIView):
    @extend_schema(
        request=s.TileRunIn,
        responses={
            201: OpenApiResponse(
                StatementJobOut,
                description="The job, run as you; with wait and page_size, a FINISHED job "
                "carries result_page as POST /sessions/{id}/statements does.",
            )
        },
    )
    def post(self, request: Request, dashboard: str, tile: str) -> Response:
        body = valid_body(s.TileRunIn, request)
        row = selectors.dashboard_get(user=request.user, dashboard_id=dashboard)
        job = services.tile_run(
            user=request.user,
            dashboard=row,
            tile=selectors.tile_get(dashboard=row, tile_id=tile),
            parameters=body.get("parameters"),
            session=body.get("session"),
            wait=body.get("wait", 0),
        )
        context: dict[str, Any] = {}
        if body.get("page_size") and job.status == jobstate.FINISHED and job.result:
            context["result_page"] = result_selectors.job_result_page(
                job=job, after=None, limit=body["page_size"]
            )
        return Response(StatementJobOut(job, context=context).data, status=201)
