"""GET|POST /auth/tokens and DELETE /auth/tokens/{id}: a user's API tokens (admins: anyone's).
Thin: parse, call accounts.tokens / accounts.selectors, serialize. Keys are never listed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, tokens
from accounts.models import MAX_TOKEN_NAME_LENGTH, ApiToken
from accounts.views import IssuedToken, issued
from core.errors import PermissionDenied
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request


class TokenIn(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=MAX_TOKEN_NAME_LENGTH, allow_blank=True)
    expires_in_seconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Lifetime; at most TESSERA_TOKEN_MAX_AGE_SECONDS when that is set "
        "(omitted: that maximum, or no expiry).",
    )


class TokenOut(serializers.Serializer[ApiToken]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    user = serializers.CharField(source="user.username", help_text="The token's owner.")
    created = serializers.DateTimeField()
    last_used = serializers.DateTimeField(
        allow_null=True, help_text="Noted at most once a minute; null: never used."
    )
    expires = serializers.SerializerMethodField(
        help_text="When it stops working (TESSERA_TOKEN_MAX_AGE_SECONDS included); null: never."
    )
    current = serializers.SerializerMethodField(
        help_text="True for the token this request is authenticated with."
    )

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_expires(self, obj: ApiToken) -> str | None:
        expiry = tokens.expiry_of(obj)
        return serializers.DateTimeField().to_representation(expiry) if expiry else None

    def get_current(self, obj: ApiToken) -> bool:
        calling = self.context.get("calling")
        return calling is not None and calling.pk == obj.pk


def _owner(request: Request) -> User:
    """Whose tokens: the caller's, or for an admin the user named by ``?user=``."""
    assert isinstance(request.user, User)  # IsAuthenticated ran first
    name = request.query_params.get("user")
    if not name or name.lower() == request.user.username.lower():
        return request.user
    if not request.user.is_staff:
        raise PermissionDenied("Only admins may list another user's tokens.")
    return selectors.user_named(name)


def _page(rows: Sequence[ApiToken], context: dict[str, Any]) -> list[Any]:
    many: type[serializers.Serializer[Any]] = TokenOut  # one serializer for the page
    return list(many(rows, many=True, context=context).data)


class TokenListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter("user", str, description="admins: whose tokens (default: yours)"),
        ],
        responses=page_of("TokenPage", TokenOut(many=True)),
        description="Your tokens, newest first (never their keys). Admins may name a user.",
    )
    def get(self, request: Request) -> Response:
        owner = _owner(request)
        page = page_request(request)
        rows = selectors.token_list(owner=owner, after=page.after, limit=page.size + 1)
        context = {"calling": request.auth if isinstance(request.auth, ApiToken) else None}
        return Response(
            page_body(
                rows,
                page,
                selectors.token_page_key,
                serialize_page=lambda shown: _page(shown, context),
            )
        )

    @extend_schema(
        request=TokenIn,
        responses={201: IssuedToken},
        description="Make a named token for scripts while signed in in the browser. The key "
        "is in `token`, shown only in this answer. Refused (403) to a token-authenticated "
        "request: a stolen token cannot mint itself a successor.",
    )
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)  # IsAuthenticated ran first
        if isinstance(request.auth, ApiToken):
            raise PermissionDenied(
                "Tokens are made in a browser session or by signing in with a password "
                "(POST /auth/token), not with another token."
            )
        body = valid_body(TokenIn, request)
        token, key = tokens.token_create(
            user=request.user,
            name=body["name"],
            expires_in_seconds=body.get("expires_in_seconds"),
            actor=request.user,
        )
        return Response(issued(token, key), status=201)


class TokenDetailView(APIView):
    @extend_schema(
        request=None,
        responses={204: None},
        description="Revoke one of your tokens (admins: anyone's). Another user's token is "
        "404, as one that does not exist.",
    )
    def delete(self, request: Request, token_id: str) -> Response:
        assert isinstance(request.user, User)  # IsAuthenticated ran first
        token = selectors.token_get(asker=request.user, token_id=int(token_id))
        tokens.token_revoke(token=token, actor=request.user)
        return Response(status=204)
