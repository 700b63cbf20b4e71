"""/saved-queries REST endpoints. Thin: parse, call one service or selector, serialize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request
from workbench import selectors, services
from workbench import serializers as s
from workbench.models import SavedQuery


def _out(request: Request, row: SavedQuery) -> Any:
    return s.SavedQueryOut(row, context={"user_id": request.user.pk}).data


def _out_page(request: Request, rows: Sequence[SavedQuery]) -> list[Any]:
    many: type[serializers.Serializer[Any]] = s.SavedQueryOut  # one serializer for the page
    return list(many(rows, many=True, context={"user_id": request.user.pk}).data)


class SavedQueryListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter(
                "scope",
                str,
                enum=list(selectors.SCOPES),
                description="mine, shared (others' queries shared with you), all (default)",
            ),
            OpenApiParameter("q", str, description="a case-insensitive part of the name"),
        ],
        responses=page_of("SavedQueryPage", s.SavedQueryOut(many=True)),
        description="Saved queries you may read, by name.",
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        params = request.query_params
        rows = selectors.saved_query_list(
            user=request.user,
            scope=params.get("scope"),
            q=params.get("q"),
            after=page.after,
            limit=page.size + 1,
        )
        return Response(
            page_body(
                rows,
                page,
                selectors.page_key,
                serialize_page=lambda shown: _out_page(request, shown),
            )
        )

    @extend_schema(request=s.SavedQueryIn, responses={201: s.SavedQueryOut})
    def post(self, request: Request) -> Response:
        row = services.saved_query_create(user=request.user, **valid_body(s.SavedQueryIn, request))
        return Response(_out(request, row), status=201)


class SavedQueryDetailView(APIView):
    @extend_schema(responses=s.SavedQueryOut)
    def get(self, request: Request, query: str) -> Response:
        return Response(_out(request, selectors.saved_query_get(user=request.user, query_id=query)))

    @extend_schema(request=s.SavedQueryPatch, responses=s.SavedQueryOut)
    def patch(self, request: Request, query: str) -> Response:
        changes = valid_body(s.SavedQueryPatch, request)
        row = selectors.saved_query_get(user=request.user, query_id=query)
        updated = services.saved_query_update(user=request.user, row=row, changes=changes)
        return Response(_out(request, updated))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, query: str) -> Response:
        row = selectors.saved_query_get(user=request.user, query_id=query)
        services.saved_query_delete(user=request.user, row=row)
        return Response(status=204)
