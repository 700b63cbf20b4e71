"""A job's result REST endpoints: pages, chart, downloads. Thin."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
)
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.session_properties import WAIT_MAX_SECONDS
from jobs import selectors
from jobs.views import wait_param
from results import queries
from results import selectors as result_selectors
from results import serializers as s
from webapp.api import PAGE_PARAMS
from webapp.pagination import page_request

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


_WAIT = OpenApiParameter(
    "wait",
    float,
    description=f"while the job runs: hold the answer up to this many seconds "
    f"(0..{WAIT_MAX_SECONDS}) until the page's rows are written or the job ends",
)


class JobResultView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter(
                "offset", int, description="the first row to return (instead of page_token)"
            ),
            *_VIEW_PARAMS,
            _WAIT,
        ],
        responses=s.ResultPageOut,
        description="A page of the job's result. While the job writes a large result (a "
        "row_limit above the server's small-result limit), the rows written so far with "
        "complete: false; otherwise RESULT_NOT_READY until it has FINISHED.",
    )
    def get(self, request: Request, job: str) -> Response:
        page = page_request(request)
        params = request.query_params
        found = selectors.job_get(user=request.user, job_id=job)
        result = result_selectors.job_result_page(
            job=found,
            after=page.after,
            limit=page.size,
            offset=params.get("offset"),
            sort=params.get("sort"),
            filters=params.getlist("filter"),
            wait=wait_param(request),
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
        body = result_selectors.job_result_chart(
            job=found,
            x=params.get("x"),
            y=params.getlist("y"),
            aggregation=params.get("aggregation"),
            points=params.get("points"),
            filters=params.getlist("filter"),
        )
        return Response(s.result_chart_out(body))


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
        parameters=[
            *_VIEW_PARAMS,
            OpenApiParameter(
                "name",
                str,
                description="the file's name without its extension (e.g. the query's title); "
                "characters unsafe in a file name become _, at most 100 kept; "
                "default job-<id>. csv, json and parquet only",
            ),
            OpenApiParameter(
                "wait",
                float,
                description=f"result.arrow of a running job: wait up to this many seconds "
                f"(0..{WAIT_MAX_SECONDS}) for its first batch or its end",
            ),
        ],
        responses={(200, "*/*"): OpenApiTypes.BINARY},
        description="The whole result (or, with sort and filter, its rows as a result page "
        "with them shows them): CSV (header row), JSON lines, Parquet, or Arrow "
        "(result.arrow: an Arrow IPC stream, application/vnd.apache.arrow.stream, in the "
        "types the result is stored in; headers X-Tessera-Row-Count and X-Tessera-Truncated: "
        "true|false). result.arrow of a job still writing its result follows it: the "
        "batches written so far, then each new one, until the job ends (X-Tessera-Complete: "
        "false; a job that fails or is canceled ends the stream with a zero-row batch whose "
        "metadata tessera.error is its error, and no end-of-stream marker).",
    )
    def get(self, request: Request, job: str, fmt: str) -> HttpResponseBase:
        found = selectors.job_get(user=request.user, job_id=job)
        params = request.query_params
        response: HttpResponseBase = result_selectors.job_result_download(
            job=found,
            fmt=fmt,
            sort=params.get("sort"),
            filters=params.getlist("filter"),
            name=params.get("name"),
            wait=wait_param(request),
        )
        return response
