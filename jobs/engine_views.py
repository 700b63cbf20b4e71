"""Engines REST endpoints (docs/api.md "Engines"): list, read, restart, stop. Thin: reads
by ``jobs.selectors``, writes by ``jobs.services``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors, services
from jobs import serializers as s
from jobs.models import Engine
from webapp.api import PAGE_PARAMS, page_of
from webapp.pagination import page_body, page_request


def _page(rows: Sequence[Engine]) -> list[Any]:
    return s.engines_out(rows, selectors.engine_owners(rows))


def _one(engine: Engine) -> dict[str, Any]:
    return dict(_page([engine])[0])


class EngineListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter(
                "state",
                str,
                description="live (STARTING, READY, STOPPING), or a comma list of STARTING, "
                "READY, STOPPING, STOPPED, LOST",
            ),
        ],
        responses=page_of("EnginePage", s.EngineOut(many=True)),
        description="Admins: every engine; others: their own share key's. Live engines "
        "first, then newest first.",
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        rows = selectors.engine_list(
            user=request.user,
            state=request.query_params.get("state"),
            after=page.after,
            limit=page.size + 1,
        )
        return Response(page_body(rows, page, selectors.engine_page_key, serialize_page=_page))


class EngineDetailView(APIView):
    @extend_schema(
        responses=s.EngineOut,
        description="One engine you may see; 404 NOT_FOUND for another's, as for none.",
    )
    def get(self, request: Request, engine: str) -> Response:
        return Response(_one(selectors.engine_get(user=request.user, engine_id=engine)))


class EngineRestartView(APIView):
    @extend_schema(
        request=None,
        responses={202: s.EngineOut},
        description="Ask for a fresh engine: its worker stops this one and the next "
        "statement of its share key starts another. Your own engine (admins: any; another's "
        "is 404). 202 with the engine once recorded; 409 ENGINE_STOPPED when it has stopped.",
    )
    def post(self, request: Request, engine: str) -> Response:
        found = services.engine_restart(user=request.user, engine_id=engine)
        return Response(_one(found), status=202)


class EngineStopView(APIView):
    @extend_schema(
        request=None,
        responses={202: s.EngineOut},
        description="Stop an engine (admins only: 403 PERMISSION_DENIED for others). 202 "
        "with the engine once recorded; 409 ENGINE_STOPPED when it has stopped.",
    )
    def post(self, request: Request, engine: str) -> Response:
        found = services.engine_stop(user=request.user, engine_id=engine)
        return Response(_one(found), status=202)
