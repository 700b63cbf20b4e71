"""POST|DELETE /auth/token, POST /users (admins), GET /users/me; the browser's session login:
POST /auth/login, POST /auth/logout, GET /auth/csrf, GET /auth/session. A user's tokens
(GET|POST /auth/tokens, DELETE /auth/tokens/{id}) are in accounts.token_views.

Sign-in attempts (token and login, and Django admin's login form: ``admin_login``) are
throttled per client address, in one count (accounts.throttles)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import authenticate, login, logout
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.utils.html import escape
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import tokens
from accounts.authentication import ApiTokenAuthentication, token_scheme
from accounts.models import MAX_TOKEN_NAME_LENGTH, ApiToken
from accounts.quotas import quotas_of
from accounts.services import user_create
from accounts.throttles import SignInThrottle, admit_sign_in
from catalog import services as catalog_services
from core.errors import CoreError
from webapp.errors import error_body


class Credentials(serializers.Serializer[Any]):
    username = serializers.CharField()
    password = serializers.CharField(trim_whitespace=False)


class UserIn(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150, trim_whitespace=False, allow_blank=True)
    password = serializers.CharField(trim_whitespace=False)
    is_admin = serializers.BooleanField(required=False, default=False)
    teams = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class UserCan(serializers.Serializer[Any]):
    create_catalog = serializers.BooleanField(
        help_text="May create catalogs (TESSERA_CATALOG_CREATORS: everyone, or admins only)."
    )


class QuotaOut(serializers.Serializer[Any]):
    limit = serializers.IntegerField(
        allow_null=True, help_text="The server's limit per user; null: no limit."
    )
    used = serializers.IntegerField(help_text="How much of it the user holds now.")


class UserQuotas(serializers.Serializer[Any]):
    running_jobs = QuotaOut(help_text="Spark jobs running at once (TESSERA_USER_RUNNING_JOBS).")
    queued_jobs = QuotaOut(
        help_text="Unfinished jobs, a script counted once (TESSERA_USER_QUEUED_JOBS)."
    )
    streams = QuotaOut(help_text="Streams running or waiting (TESSERA_USER_STREAMS).")
    sessions = QuotaOut(help_text="Open sessions (TESSERA_USER_SESSIONS).")
    upload_bytes = QuotaOut(
        help_text="Bytes of uploads held in all sessions (TESSERA_USER_UPLOAD_BYTES)."
    )


class UserOut(serializers.Serializer[User]):
    username = serializers.CharField()
    is_admin = serializers.BooleanField(source="is_staff")
    teams = serializers.SerializerMethodField(
        help_text="The teams the user was added to; team everyone is implied (GET /teams)."
    )
    can = serializers.SerializerMethodField()

    def get_teams(self, obj: User) -> list[str]:
        return sorted(g.name for g in obj.groups.all())

    @extend_schema_field(UserCan)
    def get_can(self, obj: User) -> dict[str, bool]:
        return {"create_catalog": catalog_services.may_create_catalogs(obj)}


class MeOut(UserOut):
    quotas = serializers.SerializerMethodField(
        help_text="Each per-user limit with the user's current use (docs/security.md §4)."
    )

    @extend_schema_field(UserQuotas)
    def get_quotas(self, obj: User) -> dict[str, Any]:
        return quotas_of(obj.pk)


class NotAuthenticatedError(CoreError):
    code = "NOT_AUTHENTICATED"


class InvalidCredentials(CoreError):
    code = "INVALID_CREDENTIALS"


def _credentials_user(request: Request) -> User | None:
    """The active user named by the body's username and password, or None."""
    body = Credentials(data=request.data)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    user = authenticate(request, username=data["username"], password=data["password"])
    return user if isinstance(user, User) and user.is_active else None


class SignIn(Credentials):
    name = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=MAX_TOKEN_NAME_LENGTH,
        help_text="A name for the new token (GET /auth/tokens shows it).",
    )


class IssuedToken(serializers.Serializer[Any]):
    token = serializers.CharField(help_text="The key: shown this once, never again.")
    id = serializers.IntegerField()
    name = serializers.CharField()
    created = serializers.DateTimeField()
    expires = serializers.DateTimeField(allow_null=True)


def issued(token: ApiToken, key: str) -> dict[str, Any]:
    """The body that hands a new token's key over (the one time it is known)."""
    return dict(
        IssuedToken(
            {
                "token": key,
                "id": token.pk,
                "name": token.name,
                "created": token.created,
                "expires": tokens.expiry_of(token),
            }
        ).data
    )


def _calling_token(request: Request) -> ApiToken:
    """The token that authenticated ``request`` (a session-authenticated request has none)."""
    if not isinstance(request.auth, ApiToken):
        raise CoreError(
            "This request was not authenticated with a token: send Authorization: Token <key>.",
        )
    return request.auth


class TokenView(APIView):
    """POST signs in with a password and issues a new token (throttled as a sign-in attempt);
    DELETE revokes the token that authenticates it."""

    def _signing_in(self) -> bool:
        # View.setup sets the request before DRF's is made: the method picks the scheme
        # (drf-spectacular asks without a request: it is told about DELETE, POST says auth=[]).
        return getattr(self.request, "method", None) == "POST"

    def get_authenticators(self) -> list[Any]:
        return [] if self._signing_in() else [ApiTokenAuthentication()]

    def get_permissions(self) -> list[Any]:
        return [AllowAny()] if self._signing_in() else [IsAuthenticated()]

    def get_throttles(self) -> list[Any]:
        return [SignInThrottle()] if self._signing_in() else []

    @extend_schema(
        request=SignIn,
        responses=IssuedToken,
        auth=[],
        description="Sign in: a new token each time (never an earlier one). The key is in "
        "`token`, shown only in this answer. It expires after TESSERA_TOKEN_MAX_AGE_SECONDS "
        "when that is set (`expires`).",
    )
    def post(self, request: Request) -> Response:
        # The whole body first: a bad name costs no password hash.
        body = SignIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = _credentials_user(request)
        if user is None:
            raise NotAuthenticatedError("The username or password is not correct.")
        token, key = tokens.token_create(
            user=user, name=body.validated_data["name"], signed_in=True
        )
        return Response(issued(token, key))

    @extend_schema(
        request=None,
        responses={204: None},
        description="Revoke the token this request is authenticated with.",
    )
    def delete(self, request: Request) -> Response:
        tokens.token_revoke(token=_calling_token(request), actor=request.user)
        return Response(status=204)


class UsersView(APIView):
    permission_classes = (IsAdminUser,)

    @extend_schema(request=UserIn, responses={201: UserOut})
    def post(self, request: Request) -> Response:
        body = UserIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = user_create(**body.validated_data, actor=request.user)
        return Response(UserOut(user).data, status=201)


class MeView(APIView):
    @extend_schema(responses=MeOut)
    def get(self, request: Request) -> Response:
        assert isinstance(request.user, User)  # IsAuthenticated ran first
        return Response(MeOut(request.user).data)


# --- the browser's session (cookie + CSRF) ---------------------------------------------------
#
# DRF wraps every APIView in csrf_exempt, and SessionAuthentication checks CSRF only for a
# request that is already logged in. Login (and logout) must not be forgeable either, so both
# views run Django's CSRF check themselves; a failure answers through CSRF_FAILURE_VIEW
# (403 PERMISSION_DENIED, JSON).


@method_decorator(csrf_protect, name="dispatch")
class LoginView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = (SignInThrottle,)

    @extend_schema(
        request=Credentials,
        responses={200: UserOut},
        auth=[],
        description="Start a browser session (session cookie). Needs the CSRF token: the "
        "csrftoken cookie echoed in the X-CSRFToken header. The token rotates on login.",
    )
    def post(self, request: Request) -> Response:
        user = _credentials_user(request)
        if user is None:
            raise InvalidCredentials("The username or password is not correct.")
        login(request._request, user)
        return Response(UserOut(user).data)


class LogoutView(APIView):
    """With a token: revoke it (no CSRF: a browser never sends our Authorization header by
    itself). Otherwise end the browser session, which needs the CSRF token like login."""

    authentication_classes = (ApiTokenAuthentication,)
    permission_classes = (AllowAny,)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if token_scheme(request):
            return super().dispatch(request, *args, **kwargs)
        return csrf_protect(super().dispatch)(request, *args, **kwargs)

    @extend_schema(
        request=None,
        responses={204: None},
        description="With `Authorization: Token <key>`: revoke that token. Without: end the "
        "browser session (also when there is none); needs the CSRF token.",
    )
    def post(self, request: Request) -> Response:
        if isinstance(request.auth, ApiToken):
            tokens.token_revoke(token=request.auth, actor=request.user, reason=tokens.LOGOUT)
        else:
            logout(request._request)
        return Response(status=204)


@extend_schema_serializer(component_name="CsrfToken")
class CsrfTokenOut(serializers.Serializer[Any]):
    csrf_token = serializers.CharField()


@extend_schema_serializer(component_name="SessionState")
class SessionStateOut(serializers.Serializer[Any]):
    authenticated = serializers.BooleanField()
    user = UserOut(allow_null=True)


@method_decorator(ensure_csrf_cookie, name="dispatch")
class CsrfView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(
        responses=CsrfTokenOut,
        auth=[],
        description="Set the csrftoken cookie; the token is also in the body.",
    )
    def get(self, request: Request) -> Response:
        return Response(CsrfTokenOut({"csrf_token": get_token(request._request)}).data)


class SessionView(APIView):
    """Who the request's session (or token) belongs to, answered to anyone: the UI asks this
    when it starts, so that a visitor who is not logged in costs no 401."""

    permission_classes = (AllowAny,)

    @extend_schema(
        responses=SessionStateOut,
        description="`user` is the body of GET /users/me, or null when not logged in.",
    )
    def get(self, request: Request) -> Response:
        user = request.user
        if isinstance(user, User) and user.is_authenticated:
            return Response(SessionStateOut({"authenticated": True, "user": user}).data)
        return Response(SessionStateOut({"authenticated": False, "user": None}).data)


# --- Django admin's login form ---------------------------------------------------------------

_THROTTLED_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Too many sign-in attempts</title></head>
<body>
<h1>Too many sign-in attempts</h1>
<p>Too many sign-in attempts came from your address. Wait {seconds} seconds, then
<a href="{again}">try again</a>.</p>
</body>
</html>
"""


@never_cache
@login_not_required
def admin_login(
    request: HttpRequest, extra_context: dict[str, Any] | None = None
) -> HttpResponseBase:
    """``/admin/login/``: Django admin's own login form, behind the sign-in throttle.

    Each POST is a password guess and counts with ``/auth/token`` and ``/auth/login``
    (showing the form does not). Past the rate the form is not processed: ``429`` with
    ``Retry-After``, as a short HTML page — the admin is used from a browser, which would
    show the contract's JSON as raw text in place of the form — unless the client prefers
    JSON (``Accept: application/json``), which gets the contract's ``TOO_MANY_REQUESTS``.
    CSRF was already checked by the middleware, as for the API's ``/auth/login``.
    """
    if request.method == "POST":
        seconds = admit_sign_in(request)
        if seconds is not None:
            return _throttled(request, seconds)
    return admin.site.login(request, extra_context)


def _throttled(request: HttpRequest, seconds: int) -> HttpResponseBase:
    wanted = request.get_preferred_type(["text/html", "application/json"])
    response: HttpResponseBase
    if wanted == "application/json":
        response = JsonResponse(
            error_body(
                "TOO_MANY_REQUESTS",
                f"Too many attempts; try again in {seconds} s.",
                {"retry_after": seconds},
            ),
            status=429,
        )
    else:
        page = _THROTTLED_PAGE.format(seconds=seconds, again=escape(request.get_full_path()))
        response = HttpResponse(page, status=429, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(seconds)
    return response
