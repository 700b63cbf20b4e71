"""Reads of schedules, their runs, alerts and notifications: a user sees only their own
(anyone else's id answers NOT_FOUND, as a missing one does), in keyset pages."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, Q, QuerySet

from core.errors import NotFound
from jobs.selectors import User, keyset, parse_uuid, user_id
from schedules.models import Alert, Notification, Schedule, ScheduleRun


def _page(qs: QuerySet[Any], after: Any, limit: int, field: str, newest_first: bool) -> list[Any]:
    """Rows ordered by (``field``, id), after the page token's key."""
    if after is not None:
        at, last_id = keyset(after)
        if newest_first:
            qs = qs.filter(Q(**{f"{field}__lt": at}) | Q(**{field: at, "id__lt": last_id}))
        else:
            qs = qs.filter(Q(**{f"{field}__gt": at}) | Q(**{field: at, "id__gt": last_id}))
    order = [f"-{field}", "-id"] if newest_first else [field, "id"]
    return list(qs.order_by(*order)[:limit])


def page_key(row: Schedule | Alert | Notification) -> list[str]:
    return [row.created_at.isoformat(), str(row.pk)]


def run_page_key(row: ScheduleRun) -> list[str]:
    return [row.scheduled_for.isoformat(), str(row.pk)]


def _mine(user: User) -> QuerySet[Schedule]:
    return Schedule.objects.select_related("owner", "saved_query").filter(owner_id=user_id(user))


def schedule_list(*, user: User, after: Any, limit: int) -> list[Schedule]:
    """The user's schedules, oldest first."""
    return _page(_mine(user), after, limit, "created_at", newest_first=False)


_M = TypeVar("_M", bound=Model)


def _one(qs: QuerySet[_M], key: Any, noun: str) -> _M:
    """The row of ``qs`` whose id is ``key``; NOT_FOUND when there is none (or ``key`` is no
    id), the same answer whether it exists for someone else or not at all."""
    pk = parse_uuid(key)
    found = qs.filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise NotFound(f"{noun} {str(key)[:100]} does not exist.")
    return found


def schedule_get(*, user: User, schedule_id: Any) -> Schedule:
    return _one(_mine(user), schedule_id, "Schedule")


def run_list(*, schedule: Schedule, after: Any, limit: int) -> list[ScheduleRun]:
    """A schedule's runs, the latest slot first, with their jobs."""
    runs = ScheduleRun.objects.select_related("job").filter(schedule=schedule)
    return _page(runs, after, limit, "scheduled_for", newest_first=True)


def _my_alerts(user: User) -> QuerySet[Alert]:
    return (
        Alert.objects.select_related("schedule", "schedule__owner")
        .prefetch_related("subscribers")
        .filter(schedule__owner_id=user_id(user))
    )


def alert_list(*, user: User, schedule: Schedule | None, after: Any, limit: int) -> list[Alert]:
    """The alerts of the user's schedules (of one, given), oldest first."""
    qs = _my_alerts(user)
    if schedule is not None:
        qs = qs.filter(schedule=schedule)
    return _page(qs, after, limit, "created_at", newest_first=False)


def alert_get(*, user: User, alert_id: Any) -> Alert:
    return _one(_my_alerts(user), alert_id, "Alert")


def _notifications(user: User) -> QuerySet[Notification]:
    return Notification.objects.select_related("alert").filter(user_id=user_id(user))


def notification_list(
    *, user: User, unread_only: bool, after: Any, limit: int
) -> list[Notification]:
    """The user's notifications, newest first."""
    qs = _notifications(user)
    if unread_only:
        qs = qs.filter(read_at=None)
    return _page(qs, after, limit, "created_at", newest_first=True)


def unread_count(*, user: User) -> int:
    return _notifications(user).filter(read_at=None).count()


def notification_get(*, user: User, notification_id: Any) -> Notification:
    return _one(_notifications(user), notification_id, "Notification")
