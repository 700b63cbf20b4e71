"""Jobs REST endpoints: list, read (long-polled with ETags), cancel, events. Thin."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.session_properties import check_wait
from jobs import selectors, services
from jobs import serializers as s
from webapp.api import PAGE_PARAMS, page_of
from webapp.pagination import page_body, page_request


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
            OpenApiParameter(
                "user",
                str,
                description="admins: another user's jobs by name, or * for everyone's "
                "(others: PERMISSION_DENIED unless it names themselves)",
            ),
        ],
        responses=page_of("JobPage", s.JobOut(many=True)),
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
            owner=params.get("user"),
            after=page.after,
            limit=page.size + 1,
        )
        return Response(page_body(rows, page, selectors.keyset_token, s.job_out))


def wait_param(request: Request) -> float:
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
        wait = wait_param(request)
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
        return Response(s.job_out(services.job_cancel(user=request.user, job=found)))


class JobEventsView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=page_of("JobEventPage", s.EventOut(many=True)))
    def get(self, request: Request, job: str) -> Response:
        page = page_request(request)
        found = selectors.job_get(user=request.user, job_id=job)
        rows = selectors.job_events(job=found, after=page.after, limit=page.size + 1)
        return Response(page_body(rows, page, lambda event: event.pk, s.event_out))
