"""``/sessions/{id}/uploads``: data sent to a session as Arrow IPC, CSV or Parquet
(``sessions.uploads``)."""

from __future__ import annotations

import io
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import CoreError
from jobs.models import Upload
from sessions import services, uploads
from sessions.upload_formats import CSV_MEDIA_TYPE, MEDIA_TYPE, MEDIA_TYPES, PARQUET_MEDIA_TYPE


class UnsupportedMediaType(CoreError):
    code = "UNSUPPORTED_MEDIA_TYPE"


class ArrowStreamParser(BaseParser):
    """Names the body's media type for content negotiation and the OpenAPI schema; the view
    streams the body itself (``request.stream``), so parsing reads nothing."""

    media_type = MEDIA_TYPE

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        # Asked when the CSRF check of a browser's session looks at request.POST: the body
        # stays unread for the view.
        return {}


class CsvParser(ArrowStreamParser):
    media_type = CSV_MEDIA_TYPE


class ParquetParser(ArrowStreamParser):
    media_type = PARQUET_MEDIA_TYPE


class UploadColumnOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    data_type = serializers.CharField(help_text="a Spark SQL type, e.g. DECIMAL(38, 10)")


class UploadOut(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    rows = serializers.IntegerField()
    bytes = serializers.IntegerField(help_text="the bytes of the body received")
    columns = UploadColumnOut(many=True)
    created_at = serializers.DateTimeField()


class UploadListOut(serializers.Serializer[Any]):
    items = UploadOut(many=True)


def upload_out(upload: Upload) -> dict[str, Any]:
    return dict(UploadOut(upload).data)


class UploadListView(APIView):
    parser_classes = [ArrowStreamParser, CsvParser, ParquetParser]

    @extend_schema(
        responses=UploadListOut,
        description="The session's uploads, oldest first.",
    )
    def get(self, request: Request, session: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        return Response(UploadListOut({"items": uploads.upload_list(session=found)}).data)

    @extend_schema(
        request={media_type: OpenApiTypes.BINARY for media_type in MEDIA_TYPES},
        responses={201: UploadOut},
        description="Send data as an Arrow IPC stream (Content-Type "
        f"{MEDIA_TYPE}), a CSV file with a header row ({CSV_MEDIA_TYPE}; "
        "types inferred from its first MiB) or a Parquet file "
        f"({PARQUET_MEDIA_TYPE}), with a Content-Length; it is stored as parquet for "
        "the session's temporary tables ('connector' = 'upload'). Over "
        "TESSERA_UPLOAD_MAX_BYTES: "
        "413 PAYLOAD_TOO_LARGE; past the user's TESSERA_USER_UPLOAD_BYTES (the bytes of "
        "their uploads in all sessions): 413 UPLOAD_QUOTA_EXCEEDED.",
    )
    def post(self, request: Request, session: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        media_type = (request.content_type or "").split(";")[0].strip().lower()
        if media_type not in MEDIA_TYPES:
            raise UnsupportedMediaType(
                f"An upload is an Arrow IPC stream ({MEDIA_TYPE}), a CSV file "
                f"({CSV_MEDIA_TYPE}) or a Parquet file ({PARQUET_MEDIA_TYPE}), "
                f"not '{media_type or 'no Content-Type'}'.",
                details={"expected": MEDIA_TYPE, "accepted": list(MEDIA_TYPES)},
            )
        # The body is read by pyarrow in bounded chunks, never whole (no request.body).
        body = request.stream or io.BytesIO()
        upload = uploads.upload_create(
            session=found, body=body, announced=_length(request), media_type=media_type
        )
        return Response(upload_out(upload), status=201)


def _length(request: Request) -> int | None:
    """The request's Content-Length (an upper bound of the upload's bytes), if it has one."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
    return length if length >= 0 else None


class UploadDetailView(APIView):
    @extend_schema(responses=UploadOut)
    def get(self, request: Request, session: str, upload: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        return Response(upload_out(uploads.upload_get(session=found, upload_id=upload)))

    @extend_schema(
        responses={204: None},
        description="Delete an upload and its files; temporary tables over it fail at use.",
    )
    def delete(self, request: Request, session: str, upload: str) -> Response:
        found = services.session_get(user=request.user, session_id=session)
        uploads.upload_delete(upload=uploads.upload_get(session=found, upload_id=upload))
        return Response(status=204)
