"""Principals: the users and teams (Django groups) grants are given to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from catalog.models import EVERYONE
from core.errors import CoreError, NotFound

PrincipalType = Literal["user", "team"]


@dataclass(frozen=True)
class Principal:
    """A user or a team (a Django group) that grants are given to."""

    type: PrincipalType
    id: int
    name: str

    @property
    def key(self) -> str:
        """As ``Grant.principal_key`` stores it: ``user:5`` | ``team:3``."""
        return f"{self.type}:{self.id}"

    def described(self) -> str:
        return f"{self.type} {self.name}"


def everyone_team() -> Group:
    """The team every signed-in user is implicitly in (made again if a flush removed it)."""
    group, _ = Group.objects.get_or_create(name=EVERYONE)
    return group


def find_principal(principal_type: str, name: str) -> Principal:
    """The user or team named ``name`` (case-insensitive for teams as Django stores them).
    Raises ``NotFound`` ("There is no user named 'x'.") when there is none, and
    ``ValidationError`` for a type other than ``user``/``team``."""
    kind = str(principal_type).lower()
    if kind not in ("user", "team"):
        raise CoreError(
            f"A principal is a user or a team, not '{principal_type}'.",
            details={"field": "principal_type"},
        )
    text = str(name)
    if not text or "\x00" in text or len(text) > 150:
        raise NotFound(f"There is no {kind} named '{text[:150]}'.")
    if kind == "user":
        users = get_user_model().objects
        user = users.filter(username=text).first()
        if user is None:
            matches = list(users.filter(username__iexact=text)[:2])
            user = matches[0] if len(matches) == 1 else None
        if user is None:
            raise NotFound(f"There is no user named '{text}'.")
        return Principal("user", user.pk, user.get_username())
    if text.lower() == EVERYONE:
        group = everyone_team()
        return Principal("team", group.pk, group.name)
    team = Group.objects.filter(name__iexact=text).order_by("pk").first()
    if team is None:
        raise NotFound(f"There is no team named '{text}'.")
    return Principal("team", team.pk, team.name)
