"""``POST /sessions/{id}/pipelines``: run a pipeline job (docs/pipelines.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.session_properties import WAIT_MAX_SECONDS
from jobs import serializers as s
from sessions import services, statements
from webapp.api import valid_body


class PipelineIn(serializers.Serializer[Any]):
    entry_point = serializers.JSONField(
        help_text="'package.module:function' of a package in TESSERA_PIPELINE_PACKAGES."
    )
    args = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="Keyword arguments of the function: an object of strings, numbers, booleans "
        "or nulls (at most 64, each at most 4,096 characters as JSON).",
    )
    wait = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=WAIT_MAX_SECONDS,
        help_text="Hold the answer until the job ended or this many seconds passed.",
    )


class PipelineView(APIView):
    @extend_schema(
        request=PipelineIn,
        responses={
            201: OpenApiResponse(
                s.JobOut,
                description="The pipeline's job (kind 'pipeline'); an entry point outside the "
                "allowed packages makes a FAILED job with the error code FORBIDDEN.",
            )
        },
    )
    def post(self, request: Request, session: str) -> Response:
        data = valid_body(PipelineIn, request)
        found = services.session_get(user=request.user, session_id=session)
        job = statements.pipeline_submit(
            session=found,
            entry_point=data["entry_point"],
            args=data.get("args"),
            wait=data.get("wait"),
        )
        return Response(s.job_out(job), status=201)
