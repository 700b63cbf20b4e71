"""Users and teams (Django users and groups); the teams themselves are in accounts.teams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction

from accounts import teams as team_rules
from core.errors import AlreadyExists, CoreError
from core.identifiers import validate_name


def user_create(
    *,
    username: str,
    password: str,
    is_admin: bool = False,
    teams: Sequence[str] = (),
    actor: Any = None,
) -> User:
    """Create a user; teams are groups, created on first use (matched case-insensitively).
    ``everyone`` is implied and refused in ``teams``. ``actor`` (the admin asking) is who the
    audit events of the team changes name."""
    validate_name(username, "username")
    if len(username) > team_rules.MAX_USERNAME_LENGTH:
        raise CoreError(
            f"A username must be at most {team_rules.MAX_USERNAME_LENGTH} characters long, "
            f"got {len(username):,}.",
            details={"field": "username"},
        )
    for team in teams:
        team_rules.validate_team_name(team, "teams")
    if User.objects.filter(username__iexact=username).exists():
        raise AlreadyExists(f"A user named [{username}] already exists.")
    candidate = User(username=username)
    try:
        validate_password(password, candidate)
    except DjangoValidationError as exc:
        raise CoreError(" ".join(exc.messages), details={"field": "password"}) from exc
    try:
        with transaction.atomic():
            user = User.objects.create_user(
                username=username, password=password, is_staff=is_admin, is_superuser=is_admin
            )
            team_rules.join_teams(actor=actor, member=user, names=teams)
    except IntegrityError as exc:
        raise AlreadyExists(f"A user named [{username}] already exists.") from exc
    return user
