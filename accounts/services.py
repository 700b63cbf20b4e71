"""Users and teams (Django users and groups)."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction

from core.errors import AlreadyExists, CoreError
from core.identifiers import validate_name


def user_create(
    *, username: str, password: str, is_admin: bool = False, teams: Sequence[str] = ()
) -> User:
    """Create a user; teams are groups, created on first use."""
    validate_name(username, "username")
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
            for team in teams:
                validate_name(team, "team name")
                group, _ = Group.objects.get_or_create(name=team)
                user.groups.add(group)
    except IntegrityError as exc:
        raise AlreadyExists(f"A user named [{username}] already exists.") from exc
    return user
