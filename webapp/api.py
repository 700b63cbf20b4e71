"""What every REST view shares: the paging parameters and page shapes (for OpenAPI), reading
a JSON body, and the route of a resource."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, re_path
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers
from rest_framework.fields import SkipField
from rest_framework.request import Request
from rest_framework.views import APIView

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


def page_of(name: str, item: serializers.Serializer[Any]) -> serializers.Serializer[Any]:
    """The OpenAPI shape of a page: ``{"items": [item, …], "next_page_token"}``."""
    return inline_serializer(
        name=name,
        fields={"items": item, "next_page_token": serializers.CharField(allow_null=True)},
    )


class FromContext(serializers.Field):  # type: ignore[type-arg]
    """Mixed into a field whose value the view hands over in the serializer's context under
    the field's name (it is not the instance's); the field is left out when it is not there.
    """

    def get_attribute(self, instance: Any) -> Any:
        try:
            return self.context[self.field_name or ""]
        except KeyError:
            raise SkipField() from None


def route(pattern: str, view: type[APIView], name: str) -> URLPattern:
    # An optional trailing slash: /jobs and /jobs/ are the same resource.
    return re_path(rf"^{pattern}/?$", view.as_view(), name=name)
