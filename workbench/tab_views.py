"""/editor-tabs REST endpoints. Thin: parse, call one service or selector, serialize."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api import valid_body
from workbench import selectors, tab_services
from workbench import serializers as s
from workbench.models import EditorTab


def _out(row: EditorTab) -> Any:
    return s.EditorTabOut(row).data


class EditorTabListView(APIView):
    @extend_schema(
        responses=s.EditorTabListOut,
        description="Your editor tabs in their order, which one is active, and the limits.",
    )
    def get(self, request: Request) -> Response:
        rows = selectors.editor_tab_list(user=request.user)
        active = next((row.pk for row in rows if row.active), None)
        body = {"items": rows, "active": active, "limits": asdict(tab_services.limits())}
        return Response(s.EditorTabListOut(body).data)

    @extend_schema(
        request=s.EditorTabIn,
        responses={201: s.EditorTabOut, 200: s.EditorTabOut},
        description="A new tab (201), or the tab of that id when you have it already (200).",
    )
    def post(self, request: Request) -> Response:
        row, made = tab_services.editor_tab_create(
            user=request.user, **valid_body(s.EditorTabIn, request)
        )
        return Response(_out(row), status=201 if made else 200)


class EditorTabActiveView(APIView):
    @extend_schema(request=s.EditorTabActiveIn, responses=s.EditorTabOut)
    def put(self, request: Request) -> Response:
        body = valid_body(s.EditorTabActiveIn, request)
        return Response(
            _out(tab_services.editor_tab_activate(user=request.user, tab_id=body["id"]))
        )


class EditorTabDetailView(APIView):
    @extend_schema(responses=s.EditorTabOut)
    def get(self, request: Request, tab: str) -> Response:
        return Response(_out(selectors.editor_tab_get(user=request.user, tab_id=tab)))

    @extend_schema(
        request=s.EditorTabPatch,
        responses=s.EditorTabOut,
        description="409 CONFLICT when the tab changed since `version` (details.version).",
    )
    def patch(self, request: Request, tab: str) -> Response:
        changes = valid_body(s.EditorTabPatch, request)
        version = changes.pop("version")
        row = tab_services.editor_tab_update(
            user=request.user, tab_id=tab, version=version, changes=changes
        )
        return Response(_out(row))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, tab: str) -> Response:
        tab_services.editor_tab_delete(user=request.user, tab_id=tab)
        return Response(status=204)
