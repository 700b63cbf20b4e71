"""Page-token pagination: ``?page_size=`` (default 50, max 1000) and ``?page_token=``.

Tokens are opaque to clients: URL-safe base64 of the JSON sort key of the last item
returned. Lists use keyset pagination (``WHERE key > last``), so every page costs the
same whatever its depth.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from rest_framework import serializers
from rest_framework.request import Request

from core.errors import CoreError

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000

T = TypeVar("T")


@dataclass(frozen=True)
class PageRequest:
    size: int
    after: Any  # the decoded sort key of the last item of the previous page, or None


def encode_page_token(key: Any) -> str:
    raw = json.dumps(key, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str) -> Any:
    try:
        padded = token + "=" * (-len(token) % 4)
        return json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise CoreError(
            "The page_token is not one this server issued; start again without it.",
            details={"field": "page_token"},
        ) from exc


def page_request(request: Request) -> PageRequest:
    """Read and validate the paging parameters of a list request."""
    raw_size = request.query_params.get("page_size")
    size = DEFAULT_PAGE_SIZE
    if raw_size is not None and raw_size != "":
        try:
            size = int(raw_size)
        except ValueError:
            size = 0
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise CoreError(
                f"page_size must be a whole number between 1 and {MAX_PAGE_SIZE}, "
                f"got '{raw_size}'.",
                details={"field": "page_size"},
            )
    token = request.query_params.get("page_token")
    return PageRequest(size=size, after=decode_page_token(token) if token else None)


class PageOut(serializers.Serializer[Any]):
    """The envelope of every list, ``{"items", "next_page_token"}``; the items as the list's
    own serializer gave them. The OpenAPI document names each list's page (``page_of``)."""

    items = serializers.ListField()
    next_page_token = serializers.CharField(allow_null=True)


def whole_page(items: Any) -> dict[str, Any]:
    """A list that is never cut into pages: every item, ``next_page_token`` null."""
    return dict(PageOut({"items": items, "next_page_token": None}).data)


def page_body(
    rows: Sequence[T],
    page: PageRequest,
    key: Callable[[T], Any],
    serialize: Callable[[T], dict[str, Any]] | None = None,
    *,
    serialize_page: Callable[[Sequence[T]], list[Any]] | None = None,
) -> dict[str, Any]:
    """Build ``{"items", "next_page_token"}`` from up to ``page.size + 1`` fetched rows.

    Give ``serialize`` (one row) or ``serialize_page`` (the whole page at once: a DRF
    serializer with ``many=True`` costs a fraction of one serializer per row).
    """
    has_more = len(rows) > page.size
    shown = rows[: page.size]
    if serialize_page is not None:
        items = list(serialize_page(shown))
    elif serialize is not None:
        items = [serialize(row) for row in shown]
    else:
        raise TypeError("page_body needs serialize or serialize_page")
    token = encode_page_token(key(shown[-1])) if has_more and shown else None
    return dict(PageOut({"items": items, "next_page_token": token}).data)
