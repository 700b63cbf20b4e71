"""What every REST view shares: the paging parameters (for OpenAPI) and reading a JSON body."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from core.errors import CoreError

PAGE_PARAMS = [
    OpenApiParameter("page_size", int, description="1..1000, default 50"),
    OpenApiParameter("page_token", str, description="next_page_token of the previous page"),
]


def valid_body(serializer: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    """The request's JSON object checked by ``serializer`` (400 VALIDATION_ERROR if not)."""
    if not isinstance(request.data, dict):
        raise CoreError("The request body must be a JSON object.")
    checked = serializer(data=request.data)
    checked.is_valid(raise_exception=True)
    return dict(checked.validated_data)
