"""Writes of schedules, alerts and notifications. The views hand over rows the selectors
found for the caller (their own), so ownership is settled before a service runs."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import User as UserModel
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from core.errors import CoreError
from jobs.selectors import User, user_id
from schedules import cron
from schedules.models import (
    MAX_COLUMN_LENGTH,
    MAX_NAME_LENGTH,
    MAX_VALUE_LENGTH,
    OPERATORS,
    Alert,
    Notification,
    Schedule,
)
from workbench import selectors as saved_queries

# Hostile or runaway clients: a user's schedules, an alert's subscribers.
MAX_SCHEDULES_PER_USER = 100
MAX_ALERTS_PER_SCHEDULE = 20
MAX_SUBSCRIBERS = 50


def _bad(message: str, field: str) -> CoreError:
    return CoreError(message, details={"field": field})


# --- schedules ----------------------------------------------------------------------------


def _plan_next(row: Schedule) -> None:
    """The next slot after now, for an enabled schedule (a disabled one has none: enabling
    it again starts from then, without catching up)."""
    row.next_run_at = (
        cron.next_slot(row.cron, row.timezone, timezone.now()) if row.enabled else None
    )


def _own_query(user: User, query_id: Any) -> Any:
    """The user's own saved query. A schedule runs as its owner, with the owner's grants:
    another user's shared query would run SQL its author may change later with the
    schedule owner's rights. To schedule a shared query, save a copy of it."""
    query = saved_queries.saved_query_get(user=user, query_id=query_id)
    if query.owner_id != user_id(user):
        raise _bad(
            f"Saved query [{query.name}] is {query.owner.get_username()}'s: a schedule runs "
            "with your rights, so it runs only your own saved queries. Save a copy of it and "
            "schedule that.",
            "saved_query",
        )
    return query


def schedule_create(
    *, user: User, saved_query: Any, cron_expression: Any, timezone_name: Any, enabled: bool = True
) -> Schedule:
    """A schedule of one of the user's own saved queries (``_own_query``)."""
    owner = user_id(user)
    query = _own_query(user, saved_query)
    zone = cron.check_timezone(timezone_name)
    row = Schedule(
        owner_id=owner,
        saved_query=query,
        cron=cron.check_cron(cron_expression, zone),
        timezone=zone,
        enabled=bool(enabled),
    )
    _plan_next(row)
    with transaction.atomic():
        # The owner's row locked: two concurrent creates cannot both pass the count.
        UserModel.objects.select_for_update().filter(pk=owner).first()
        if Schedule.objects.filter(owner_id=owner).count() >= MAX_SCHEDULES_PER_USER:
            raise _bad(
                f"You have {MAX_SCHEDULES_PER_USER} schedules, the most a user may have.",
                "saved_query",
            )
        row.save()
    return Schedule.objects.select_related("owner", "saved_query").get(pk=row.pk)


def schedule_update(*, user: User, row: Schedule, changes: dict[str, Any]) -> Schedule:
    """PATCH: any of ``saved_query``, ``cron``, ``timezone``, ``enabled``. A change of the
    timing (or enabling) plans the next slot from now."""
    if "saved_query" in changes:
        row.saved_query = _own_query(user, changes["saved_query"])
    if "timezone" in changes:
        row.timezone = cron.check_timezone(changes["timezone"])
    if "cron" in changes:
        row.cron = cron.check_cron(changes["cron"], row.timezone)
    replan = bool({"cron", "timezone"} & set(changes))
    if "enabled" in changes and bool(changes["enabled"]) != row.enabled:
        row.enabled = bool(changes["enabled"])
        replan = True
    if replan:
        _plan_next(row)
    row.save()
    return row


def schedule_delete(*, row: Schedule) -> None:
    """Delete a schedule with its runs' records and its alerts (the jobs stay)."""
    row.delete()


# --- alerts -------------------------------------------------------------------------------


def _check_text(value: Any, field: str, most: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad(f"An alert needs {what}.", field)
    if len(value) > most:
        raise _bad(
            f"An alert's {field} must be at most {most} characters, got {len(value):,}.", field
        )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise _bad(f"An alert's {field} must not contain control characters.", field)
    return value


def _check_operator(value: Any) -> str:
    if value not in OPERATORS:
        raise _bad(f"An alert's operator must be one of {' '.join(OPERATORS)}.", "operator")
    return str(value)


def _check_value(value: Any) -> str:
    """The value compared with: text, or a number (kept as its text)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise _bad("An alert's value must be a number or a string.", "value")
    text = value if isinstance(value, str) else str(value)
    if not isinstance(value, str):
        try:
            if not Decimal(text).is_finite():
                raise _bad("An alert's value must be a finite number.", "value")
        except InvalidOperation as exc:
            raise _bad("An alert's value must be a finite number.", "value") from exc
    if len(text) > MAX_VALUE_LENGTH or "\x00" in text:
        raise _bad(
            f"An alert's value must be at most {MAX_VALUE_LENGTH} characters of text.", "value"
        )
    return text


def _subscribers(owner_id: Any, names: Any) -> list[Any]:
    """The owner and users who share a team with the owner, by name (they will read the
    watched value in the notification)."""
    if names is None:
        return [owner_id]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _bad("subscribers must be a list of user names.", "subscribers")
    if len(names) > MAX_SUBSCRIBERS:
        raise _bad(f"An alert may have at most {MAX_SUBSCRIBERS} subscribers.", "subscribers")
    memberships = UserModel.groups.through.objects
    owner_teams = memberships.filter(user_id=owner_id).values("group_id")
    teammate = Exists(memberships.filter(user_id=OuterRef("pk"), group_id__in=owner_teams))
    found = dict(
        UserModel.objects.filter(username__in=set(names), is_active=True)
        .filter(Q(pk=owner_id) | Q(teammate))
        .values_list("username", "pk")
    )
    missing = sorted(set(names) - set(found))
    if missing:
        raise _bad(
            f"No user named {', '.join(m[:150] for m in missing[:5])} shares a team with you: "
            "subscribers are you and your teammates.",
            "subscribers",
        )
    return list(found.values())


def alert_create(
    *,
    user: User,
    schedule: Schedule,
    name: Any,
    column: Any,
    operator: Any,
    value: Any,
    subscribers: Any = None,
) -> Alert:
    row = Alert(
        schedule=schedule,
        name=_check_text(name, "name", MAX_NAME_LENGTH, "a name"),
        column=_check_text(column, "column", MAX_COLUMN_LENGTH, "the column it watches"),
        operator=_check_operator(operator),
        value=_check_value(value),
    )
    people = _subscribers(schedule.owner_id, subscribers)
    with transaction.atomic():
        Schedule.objects.select_for_update().filter(pk=schedule.pk).first()
        if Alert.objects.filter(schedule=schedule).count() >= MAX_ALERTS_PER_SCHEDULE:
            raise _bad(f"A schedule may have at most {MAX_ALERTS_PER_SCHEDULE} alerts.", "schedule")
        row.save()
        row.subscribers.set(people)
    return row


def alert_update(*, row: Alert, changes: dict[str, Any]) -> Alert:
    """PATCH: ``name``, ``column``, ``operator``, ``value``, ``subscribers``. A changed
    condition keeps the state until the next run judges it."""
    if "name" in changes:
        row.name = _check_text(changes["name"], "name", MAX_NAME_LENGTH, "a name")
    if "column" in changes:
        row.column = _check_text(changes["column"], "column", MAX_COLUMN_LENGTH, "a column")
    if "operator" in changes:
        row.operator = _check_operator(changes["operator"])
    if "value" in changes:
        row.value = _check_value(changes["value"])
    people = (
        _subscribers(row.schedule.owner_id, changes["subscribers"])
        if "subscribers" in changes
        else None
    )
    with transaction.atomic():
        row.save()
        if people is not None:
            row.subscribers.set(people)
    return row


def alert_delete(*, row: Alert) -> None:
    row.delete()


# --- notifications ------------------------------------------------------------------------


def notification_read(*, row: Notification) -> Notification:
    """Mark one notification read (again: it keeps its first read time)."""
    if row.read_at is None:
        row.read_at = timezone.now()
        Notification.objects.filter(pk=row.pk, read_at=None).update(read_at=row.read_at)
    return row


def notifications_read_all(*, user: User) -> int:
    """Mark every unread notification of the user read; how many were."""
    changed: int = Notification.objects.filter(user_id=user_id(user), read_at=None).update(
        read_at=timezone.now()
    )
    return changed
