"""Teams (Django groups) and the principal picker (ADR 0011 §4.4).

Admins create and delete teams and edit their members; everybody sees the teams they are in
and ``everyone``, the implicit team of every signed-in user (a real group with no membership
rows: its members cannot be edited and it cannot be deleted). A non-admin who asks an admin
route of a team they are in gets ``PERMISSION_DENIED``; of a team they are not in,
``NOT_FOUND`` — exactly what a missing team answers, so an outsider learns nothing.

Every change is one transaction with its audit event (``audit.services.record``): the team as
the event's object (``object_kind`` ``team``), and as its principal for ``team_create`` /
``team_delete``; the user as the principal of ``member_add`` / ``member_remove``.

Team names are validated like other names (not empty, no control characters) and at most
150 characters (``auth_group.name``); they are unique case-insensitively, case-preserving.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q
from django.db.models.functions import Lower

from audit import models as audit_models
from audit.services import record
from catalog.models import EVERYONE
from core.errors import AlreadyExists, CoreError, NotFound, PermissionDenied
from core.identifiers import validate_name

MAX_TEAM_NAME_LENGTH = 150  # auth_group.name
MAX_USERNAME_LENGTH = 150  # auth_user.username
PRINCIPALS_LIMIT = 20
PRINCIPAL_KINDS = ("user", "team")
# A grant list in a team_delete event's detail stops here (the count is always whole).
DELETED_GRANTS_LISTED = 1000
# Lock key of team creation on PostgreSQL (two admins creating "Ops" and "ops" at once).
_CREATE_LOCK = 0x7465616D  # "team"

AnyUser = AbstractBaseUser | AnonymousUser


@dataclass(frozen=True)
class TeamInfo:
    """A team as the API shows it: ``members`` is a count (``everyone``: the active users)."""

    id: int
    name: str
    implicit: bool
    members: int


def is_admin(user: Any) -> bool:
    """Admins hold everything (``core.privileges``: ``is_staff or is_superuser``)."""
    return bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))


def shown(name: str, limit: int = 60) -> str:
    """A name as messages quote it: a hostile 100 KB name is not echoed back whole."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def validate_team_name(name: Any, field: str = "name") -> str:
    """A new team's name, checked; returned unchanged. ``field`` is what errors name."""
    if isinstance(name, str) and len(name) > MAX_TEAM_NAME_LENGTH:
        raise CoreError(
            f"A team name must be at most {MAX_TEAM_NAME_LENGTH} characters long, "
            f"got {len(name):,}.",
            details={"field": field},
        )
    try:
        return validate_name(name, "team name")
    except CoreError as exc:
        raise CoreError(str(exc), details={**(exc.details or {}), "field": field}) from exc


def is_everyone(group: Group) -> bool:
    return group.name.lower() == EVERYONE


def everyone() -> Group:
    """The implicit team (made by catalog/0011; made again if a test flush removed it)."""
    group = Group.objects.filter(name=EVERYONE).first()
    if group is not None:
        return group
    try:
        with transaction.atomic():
            return Group.objects.create(name=EVERYONE)
    except IntegrityError:
        return Group.objects.get(name=EVERYONE)


def _named(qs: Any, field: str, name: str) -> Any:
    """The row of ``qs`` whose ``field`` matches ``name`` case-insensitively, the exact
    spelling first (older data may hold two spellings of one name); None when there is none."""
    rows = list(qs.filter(**{f"{field}__iexact": name}).order_by("pk")[:10])
    if not rows:
        return None
    return next((row for row in rows if getattr(row, field) == name), rows[0])


def find_team(name: str) -> Group | None:
    """The team named ``name`` (case-insensitive), or None. No visibility check."""
    if not isinstance(name, str) or not name or len(name) > MAX_TEAM_NAME_LENGTH:
        return None
    if "\x00" in name:
        return None  # PostgreSQL text holds no NUL; no team is named so
    if name.lower() == EVERYONE:
        return everyone()
    found: Group | None = _named(Group.objects.all(), "name", name)
    return found


def find_user(username: str) -> User | None:
    """The user named ``username`` (case-insensitive, exact spelling first), or None."""
    if not isinstance(username, str) or not username or len(username) > MAX_USERNAME_LENGTH:
        return None
    if "\x00" in username:
        return None
    found: User | None = _named(User.objects.all(), "username", username)
    return found


def _no_team(name: str) -> NotFound:
    return NotFound(f"There is no team named '{shown(name)}'.", details={"team": shown(name)})


def _no_user(username: str) -> NotFound:
    return NotFound(
        f"There is no user named '{shown(username)}'.", details={"username": shown(username)}
    )


def _is_member(user: AnyUser, group: Group) -> bool:
    if user.pk is None:
        return False
    if is_everyone(group):
        return True
    return group.user_set.filter(pk=user.pk).exists()


def _visible_team(user: AnyUser, name: str) -> Group:
    """The team as ``user`` may see it: admins every team, others those they are in;
    anything else answers as a missing team."""
    group = find_team(name)
    if group is None or not (is_admin(user) or _is_member(user, group)):
        raise _no_team(name)
    return group


def _managed_team(user: AnyUser, name: str, doing: str) -> Group:
    """The team for an admin route: hidden → NOT_FOUND, seen by a non-admin → 403."""
    group = _visible_team(user, name)
    if not is_admin(user):
        raise PermissionDenied(
            f"Only admins may {doing}; you are a member of team '{shown(group.name)}'.",
            details={"team": group.name},
        )
    return group


def _refuse_everyone(group: Group, what: str) -> None:
    if is_everyone(group):
        raise CoreError(
            f"Team '{EVERYONE}' holds every signed-in user implicitly; {what}.",
            details={"team": EVERYONE},
        )


def _active_users() -> int:
    return User.objects.filter(is_active=True).count()


def _info(group: Group, members: int | None = None) -> TeamInfo:
    if is_everyone(group):
        return TeamInfo(group.pk, group.name, True, _active_users())
    count = members if members is not None else group.user_set.count()
    return TeamInfo(group.pk, group.name, False, count)


# --- reads -----------------------------------------------------------------------------------


def team_page_key(team: TeamInfo) -> list[Any]:
    return [team.name.lower(), team.id]


def _keyset(after: Any) -> tuple[str, int]:
    if (
        isinstance(after, list)
        and len(after) == 2
        and isinstance(after[0], str)
        and type(after[1]) is int
    ):
        return after[0], after[1]
    raise CoreError(
        "The page_token is not one this server issued; start again without it.",
        details={"field": "page_token"},
    )


def team_list(*, user: AnyUser, after: Any = None, limit: int) -> list[TeamInfo]:
    """Teams by name: admins see all, others the teams they are in and ``everyone``."""
    everyone()  # listed even where a flush removed it
    qs = Group.objects.annotate(key=Lower("name"), members=Count("user"))
    if not is_admin(user):
        qs = qs.filter(
            Q(pk__in=Group.objects.filter(user__pk=user.pk or 0).values("pk")) | Q(name=EVERYONE)
        )
    if after is not None:
        key, last_id = _keyset(after)
        qs = qs.filter(Q(key__gt=key) | Q(key=key, pk__gt=last_id))
    rows = list(qs.order_by("key", "pk")[:limit])
    return [_info(group, getattr(group, "members", 0)) for group in rows]


def team_get(*, user: AnyUser, name: str) -> TeamInfo:
    return _info(_visible_team(user, name))


def member_page_key(member: User) -> list[Any]:
    return [member.username]


def team_members(*, user: AnyUser, name: str, after: Any = None, limit: int) -> list[User]:
    """The team's members by username (admins or members); ``everyone``: the active users."""
    group = _visible_team(user, name)
    qs = User.objects.filter(is_active=True) if is_everyone(group) else group.user_set.all()
    if after is not None:
        if not (isinstance(after, list) and len(after) == 1 and isinstance(after[0], str)):
            _keyset(None)  # raises the page-token error
        qs = qs.filter(username__gt=after[0])
    return list(qs.order_by("username")[:limit])


@dataclass(frozen=True)
class PrincipalInfo:
    type: str  # user | team
    name: str


def principals(*, user: AnyUser, q: str = "", kind: str | None = None) -> list[PrincipalInfo]:
    """Up to 20 users and teams whose names start with ``q`` (case-insensitive), by name:
    what the UI's principal picker offers. Every signed-in user may ask (a grant names a team
    its granter need not be in); inactive users are left out."""
    if kind not in (None, "", *PRINCIPAL_KINDS):
        raise CoreError(
            f"kind must be one of {', '.join(PRINCIPAL_KINDS)}, got '{shown(str(kind))}'.",
            details={"field": "kind"},
        )
    prefix = q or ""
    if len(prefix) > MAX_TEAM_NAME_LENGTH or "\x00" in prefix:
        return []  # no name is that long, none holds NUL
    found: list[PrincipalInfo] = []
    if kind in (None, "", "user"):
        users = User.objects.filter(is_active=True)
        if prefix:
            users = users.filter(username__istartswith=prefix)
        names = users.order_by(Lower("username"), "username").values_list("username", flat=True)
        found += [PrincipalInfo("user", n) for n in names[:PRINCIPALS_LIMIT]]
    if kind in (None, "", "team"):
        everyone()
        teams = Group.objects.all()
        if prefix:
            teams = teams.filter(name__istartswith=prefix)
        team_names = teams.order_by(Lower("name"), "name").values_list("name", flat=True)
        found += [PrincipalInfo("team", n) for n in team_names[:PRINCIPALS_LIMIT]]
    found.sort(key=lambda p: (p.name.lower(), p.type, p.name))
    return found[:PRINCIPALS_LIMIT]


def teams_of(user: AnyUser) -> list[str]:
    """The names of the teams ``user`` was added to (``everyone`` is implied, not listed)."""
    if user.pk is None:
        return []
    return sorted(Group.objects.filter(user__pk=user.pk).values_list("name", flat=True))


# --- writes ----------------------------------------------------------------------------------


def _lock_team_names() -> None:
    """Serialise team creation: uniqueness is case-insensitive, the column's constraint is
    not. SQLite's immediate transactions serialise writers already."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CREATE_LOCK])


def _audit_team(action: str, actor: Any, group: Group, **detail: Any) -> None:
    record(
        action,
        actor=actor,
        object_kind="team",
        path=(group.name,),
        principal=("team", group.name),
        detail=detail,
    )


def _create(actor: Any, name: str) -> Group:
    """Inside a transaction: a new team, or ALREADY_EXISTS."""
    _lock_team_names()
    existing = Group.objects.filter(name__iexact=name).first()
    if existing is not None or name.lower() == EVERYONE:
        raise AlreadyExists(
            f"A team named '{existing.name if existing else EVERYONE}' already exists.",
            details={"field": "name"},
        )
    group = Group.objects.create(name=name)
    _audit_team(audit_models.TEAM_CREATE, actor, group)
    return group


def team_create(*, user: AnyUser, name: Any) -> TeamInfo:
    """A new, empty team (admins)."""
    if not is_admin(user):
        raise PermissionDenied("Only admins may create teams.")
    checked = validate_team_name(name)
    with transaction.atomic():
        group = _create(user, checked)
    return TeamInfo(group.pk, group.name, False, 0)


def team_delete(*, user: AnyUser, name: str) -> None:
    """Delete a team (admins): its memberships and grants go with it (FK cascade)."""
    group = _managed_team(user, name, "delete teams")
    _refuse_everyone(group, "it cannot be deleted")
    with transaction.atomic():
        group = Group.objects.select_for_update().get(pk=group.pk)
        grants = list(
            group.tessera_grants.order_by("securable_key", "privilege").values_list(
                "securable_kind", "securable_key", "privilege"
            )
        )
        members = group.user_set.count()
        _audit_team(
            audit_models.TEAM_DELETE,
            user,
            group,
            members=members,
            grants=len(grants),
            grants_removed=[
                {"kind": kind, "securable_key": key, "privilege": privilege}
                for kind, key, privilege in grants[:DELETED_GRANTS_LISTED]
            ],
        )
        group.delete()


def _audit_member(action: str, actor: Any, group: Group, member: User) -> None:
    record(
        action,
        actor=actor,
        object_kind="team",
        path=(group.name,),
        principal=("user", member.get_username()),
        detail={"team": group.name},
    )


def member_add(*, user: AnyUser, name: str, username: str) -> bool:
    """Put ``username`` in the team (admins); idempotent. True when newly added."""
    group = _managed_team(user, name, "change a team's members")
    _refuse_everyone(group, "its members cannot be edited")
    member = find_user(username)
    if member is None:
        raise _no_user(username)
    with transaction.atomic():
        group = Group.objects.select_for_update().get(pk=group.pk)
        if group.user_set.filter(pk=member.pk).exists():
            return False
        group.user_set.add(member)
        _audit_member(audit_models.MEMBER_ADD, user, group, member)
    return True


def member_remove(*, user: AnyUser, name: str, username: str) -> bool:
    """Take ``username`` out of the team (admins); idempotent. True when removed."""
    group = _managed_team(user, name, "change a team's members")
    _refuse_everyone(group, "its members cannot be edited")
    member = find_user(username)
    if member is None:
        raise _no_user(username)
    with transaction.atomic():
        group = Group.objects.select_for_update().get(pk=group.pk)
        if not group.user_set.filter(pk=member.pk).exists():
            return False
        group.user_set.remove(member)
        _audit_member(audit_models.MEMBER_REMOVE, user, group, member)
    return True


def join_teams(*, actor: Any, member: User, names: Sequence[str]) -> None:
    """Inside the caller's transaction: put a new user in ``names`` (made on first use, as
    ``POST /users`` always did), each change audited. ``everyone`` is refused: implied."""
    for name in names:
        checked = validate_team_name(name, "teams")
        if checked.lower() == EVERYONE:
            raise CoreError(
                f"Every user is in team '{EVERYONE}' already; leave it out of teams.",
                details={"field": "teams"},
            )
        _lock_team_names()
        group = find_team(checked) or _create(actor, checked)
        if not group.user_set.filter(pk=member.pk).exists():
            group.user_set.add(member)
            _audit_member(audit_models.MEMBER_ADD, actor, group, member)
