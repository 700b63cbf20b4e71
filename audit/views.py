"""``GET /audit``: the audit trail, for admins (others 403). Thin: the filters are judged by
``audit.selectors.events``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import selectors
from audit.models import ACTIONS, AuditEvent
from audit.serializers import AuditEventOut
from core.errors import PermissionDenied
from webapp.api import PAGE_PARAMS, page_of
from webapp.pagination import page_body, page_request

FILTERS = ("action", "actor", "principal", "object", "object_kind", "job", "since", "until")


def _is_admin(user: Any) -> bool:
    return bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))


def serialize_page(rows: Sequence[AuditEvent]) -> list[Any]:
    """A page of events in the REST shape (also for an object's recent access)."""
    many: type[serializers.Serializer[Any]] = AuditEventOut  # one serializer for the page
    return list(many(rows, many=True).data)


class AuditListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter("action", str, description=f"comma list of {', '.join(ACTIONS)}"),
            OpenApiParameter("actor", str, description="the username of who acted"),
            OpenApiParameter("principal", str, description="user:<username> or team:<team name>"),
            OpenApiParameter(
                "object", str, description="a SQL path of 1 to 3 parts: it and what is below it"
            ),
            OpenApiParameter(
                "object_kind",
                str,
                description=f"comma list of {', '.join(selectors.OBJECT_KINDS)}",
            ),
            OpenApiParameter("job", str, description="a job id"),
            OpenApiParameter("since", str, description="ISO-8601, UTC if naive; at or after"),
            OpenApiParameter("until", str, description="ISO-8601, UTC if naive; before"),
        ],
        responses=page_of("AuditPage", AuditEventOut(many=True)),
        description="Audit events, newest first (admins; others 403). A bad filter value is "
        "400 VALIDATION_ERROR naming the parameter (details.field).",
    )
    def get(self, request: Request) -> Response:
        if not _is_admin(request.user):
            raise PermissionDenied("Only admins may read the audit log.")
        page = page_request(request)
        params = request.query_params
        rows = selectors.events(
            **{name: params.get(name) for name in FILTERS},
            after=page.after,
            limit=page.size + 1,
        )
        return Response(page_body(rows, page, selectors.page_key, serialize_page=serialize_page))
