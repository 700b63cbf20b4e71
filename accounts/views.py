"""POST /auth/token, POST /users (admins), GET /users/me."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny, IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.services import user_create
from core.errors import CoreError


class Credentials(serializers.Serializer[Any]):
    username = serializers.CharField()
    password = serializers.CharField(trim_whitespace=False)


class UserIn(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150, trim_whitespace=False, allow_blank=True)
    password = serializers.CharField(trim_whitespace=False)
    is_admin = serializers.BooleanField(required=False, default=False)
    teams = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class UserOut(serializers.Serializer[User]):
    username = serializers.CharField()
    is_admin = serializers.BooleanField(source="is_staff")
    teams = serializers.SerializerMethodField()

    def get_teams(self, obj: User) -> list[str]:
        return sorted(g.name for g in obj.groups.all())


class NotAuthenticatedError(CoreError):
    code = "NOT_AUTHENTICATED"


class TokenView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(
        request=Credentials,
        responses=inline_serializer("Token", {"token": serializers.CharField()}),
        auth=[],
    )
    def post(self, request: Request) -> Response:
        body = Credentials(data=request.data)
        body.is_valid(raise_exception=True)
        user = authenticate(
            request,
            username=body.validated_data["username"],
            password=body.validated_data["password"],
        )
        if user is None or not user.is_active:
            raise NotAuthenticatedError("The username or password is not correct.")
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class UsersView(APIView):
    permission_classes = (IsAdminUser,)

    @extend_schema(request=UserIn, responses={201: UserOut})
    def post(self, request: Request) -> Response:
        body = UserIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = user_create(**body.validated_data)
        return Response(UserOut(user).data, status=201)


class MeView(APIView):
    @extend_schema(responses=UserOut)
    def get(self, request: Request) -> Response:
        assert isinstance(request.user, User)  # IsAuthenticated ran first
        return Response(UserOut(request.user).data)
