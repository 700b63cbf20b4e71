"""/teams, /teams/{team}, /teams/{team}/members[/{username}] and /principals (ADR 0011).
Thin: parse, call accounts.teams, serialize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import teams
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request, whole_page


class TeamIn(serializers.Serializer[Any]):
    # Length and characters are judged by accounts.teams (one message for API and SQL).
    name = serializers.CharField(trim_whitespace=False, allow_blank=True)


class TeamOut(serializers.Serializer[teams.TeamInfo]):
    name = serializers.CharField()
    implicit = serializers.BooleanField(
        help_text="True for team everyone: every signed-in user is in it, without being added."
    )
    members = serializers.IntegerField(help_text="How many users are in the team.")


class MemberOut(serializers.Serializer[User]):
    username = serializers.CharField()
    is_admin = serializers.BooleanField(source="is_staff")


class PrincipalOut(serializers.Serializer[teams.PrincipalInfo]):
    type = serializers.ChoiceField(choices=teams.PRINCIPAL_KINDS)
    name = serializers.CharField()


def _members_page(rows: Sequence[User]) -> list[Any]:
    many: type[serializers.Serializer[Any]] = MemberOut  # one serializer for the page
    return list(many(rows, many=True).data)


class TeamListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=page_of("TeamPage", TeamOut(many=True)),
        description="Teams by name. Admins: every team; others: the teams they are in and "
        "everyone (implicit: true).",
    )
    def get(self, request: Request) -> Response:
        page = page_request(request)
        rows = teams.team_list(user=request.user, after=page.after, limit=page.size + 1)
        return Response(
            page_body(rows, page, teams.team_page_key, lambda row: dict(TeamOut(row).data))
        )

    @extend_schema(
        request=TeamIn,
        responses={201: TeamOut},
        description="Create an empty team (admins; others 403). Names are unique "
        "case-insensitively (409 ALREADY_EXISTS).",
    )
    def post(self, request: Request) -> Response:
        body = valid_body(TeamIn, request)
        made = teams.team_create(user=request.user, name=body["name"])
        return Response(TeamOut(made).data, status=201)


class TeamDetailView(APIView):
    @extend_schema(
        responses=TeamOut,
        description="A team you are in (admins: any team); 404 for any other.",
    )
    def get(self, request: Request, team: str) -> Response:
        return Response(TeamOut(teams.team_get(user=request.user, name=team)).data)

    @extend_schema(
        responses={204: None},
        description="Delete a team and every grant to it (admins). Team everyone: 400.",
    )
    def delete(self, request: Request, team: str) -> Response:
        teams.team_delete(user=request.user, name=team)
        return Response(status=204)


class TeamMemberListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=page_of("TeamMemberPage", MemberOut(many=True)),
        description="The team's members by username (admins, or members of the team).",
    )
    def get(self, request: Request, team: str) -> Response:
        page = page_request(request)
        rows = teams.team_members(
            user=request.user, name=team, after=page.after, limit=page.size + 1
        )
        return Response(
            page_body(
                rows,
                page,
                teams.member_page_key,
                serialize_page=_members_page,
            )
        )


class TeamMemberView(APIView):
    @extend_schema(
        request=None,
        responses={204: None},
        description="Put the user in the team (admins; idempotent). Team everyone: 400.",
    )
    def put(self, request: Request, team: str, username: str) -> Response:
        teams.member_add(user=request.user, name=team, username=username)
        return Response(status=204)

    @extend_schema(
        responses={204: None},
        description="Take the user out of the team (admins; idempotent). Team everyone: 400.",
    )
    def delete(self, request: Request, team: str, username: str) -> Response:
        teams.member_remove(user=request.user, name=team, username=username)
        return Response(status=204)


class PrincipalListView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="the start of the name (case-insensitive)"),
            OpenApiParameter("kind", str, enum=list(teams.PRINCIPAL_KINDS)),
        ],
        responses=page_of("PrincipalPage", PrincipalOut(many=True)),
        description=f"Up to {teams.PRINCIPALS_LIMIT} users and teams whose names start with "
        "q, by name: the choices of a grant's principal. next_page_token is always null.",
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        found = teams.principals(user=request.user, q=params.get("q", ""), kind=params.get("kind"))
        many: type[serializers.Serializer[Any]] = PrincipalOut  # one serializer for the list
        return Response(whole_page(many(found, many=True).data))
