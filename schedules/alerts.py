"""Alerts judged on a finished run: the first row's value of the alert's column against
its operator and value; a change of state (ok → triggered, triggered → ok) notifies each
subscriber in the app (``Notification``) and by e-mail (Django's mail, after commit).

No row: the condition is not met (an empty result is nothing to alert about). A column the
result lacks fails the run (``ALERT_FAILED``) and leaves the alert as it was. A run older
than the one an alert last judged changes nothing (runs may end out of order).
"""

from __future__ import annotations

import logging
import operator as op
from collections.abc import Callable
from datetime import UTC
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import Any

from django.core.mail import send_mass_mail
from django.db import transaction

from core.errors import CoreError
from jobs.models import Job
from results import store
from schedules.models import (
    FAILED,
    KIND_CLEARED,
    KIND_TRIGGERED,
    OK,
    TRIGGERED,
    Alert,
    Notification,
    ScheduleRun,
)

log = logging.getLogger(__name__)

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">": op.gt,
    ">=": op.ge,
    "<": op.lt,
    "<=": op.le,
    "=": op.eq,
    "!=": op.ne,
}
ALERT_FAILED = "ALERT_FAILED"


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return None if number.is_snan() else number  # NaN and infinities as Spark wrote them


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def condition_met(cell: Any, operator: str, value: str) -> bool:
    """Numbers compare as numbers (decimals exactly), anything else as text; NULL never
    meets a condition."""
    if cell is None:
        return False
    left, right = _number(cell), _number(value)
    if left is not None and right is not None:
        if left.is_finite() and right.is_finite():
            return _COMPARE[operator](left, right)
        return _COMPARE[operator](float(left), float(right))  # NaN meets only !=
    return _COMPARE[operator](_text(cell), value)


def _column(columns: list[str], wanted: str) -> int | None:
    """The column's index: its exact name, else the one name equal ignoring case."""
    if wanted in columns:
        return columns.index(wanted)
    folded = [i for i, name in enumerate(columns) if name.lower() == wanted.lower()]
    return folded[0] if len(folded) == 1 else None


def _first_row(job: Job) -> tuple[list[str], list[Any] | None]:
    result = job.result or {}
    columns = [str(c.get("name")) for c in result.get("columns") or []]
    if not result.get("row_count"):
        return columns, None
    rows, _ = store.read_page(job.id, 0, 1)
    return columns, (rows[0] if rows else None)


def judge(run: ScheduleRun, job: Job) -> None:
    """Judge every alert of the run's schedule on the job's result."""
    watching = list(Alert.objects.filter(schedule_id=run.schedule_id).order_by("created_at"))
    if not watching:
        return
    try:
        columns, row = _first_row(job)
    except CoreError as exc:  # the result expired, or its file is gone
        _fail(run, f"The alerts could not read the run's result: {exc.message}", [])
        return
    problems: list[dict[str, Any]] = []
    for alert in watching:
        index = _column(columns, alert.column)
        if index is None:
            problems.append({"alert": str(alert.pk), "column": alert.column})
            continue
        cell = row[index] if row is not None else None
        _judge_one(
            alert.pk,
            run,
            row is not None and condition_met(cell, alert.operator, alert.value),
            cell,
        )
    if problems:
        first = next(a for a in watching if str(a.pk) == problems[0]["alert"])
        more = f" ({len(problems) - 1} more alerts too)" if len(problems) > 1 else ""
        shown = ", ".join(columns)[:300] or "none"
        _fail(
            run,
            f"Alert [{first.name}] watches column [{first.column[:200]}], which the result of "
            f"this run lacks (its columns: {shown}){more}.",
            problems,
        )


def _fail(run: ScheduleRun, message: str, problems: list[dict[str, Any]]) -> None:
    ScheduleRun.objects.filter(pk=run.pk).update(
        status=FAILED,
        error={"code": ALERT_FAILED, "message": message, "details": {"alerts": problems}},
    )


def _judge_one(alert_id: Any, run: ScheduleRun, met: bool, cell: Any) -> None:
    with transaction.atomic():
        alert = (
            Alert.objects.select_for_update(of=("self",))
            .select_related("schedule__saved_query")
            .get(pk=alert_id)
        )
        if alert.last_evaluated_at is not None and run.scheduled_for < alert.last_evaluated_at:
            return  # a later run judged it already
        state = TRIGGERED if met else OK
        changed = state != alert.state
        Alert.objects.filter(pk=alert.pk).update(
            state=state, last_value=_shown_json(cell), last_evaluated_at=run.scheduled_for
        )
        if not changed:
            return
        kind = KIND_TRIGGERED if met else KIND_CLEARED
        message = _message(alert, kind, cell, run)
        people = list(alert.subscribers.filter(is_active=True))
        Notification.objects.bulk_create(
            [Notification(user=p, alert=alert, run=run, kind=kind, message=message) for p in people]
        )
        mails: list[tuple[str, str, str | None, list[str]]] = [
            (f"[Tessera] Alert {alert.name[:100]} {kind}", message, None, [p.email])
            for p in people
            if p.email
        ]
        if mails:
            transaction.on_commit(partial(_send, mails))


def _shown_json(cell: Any) -> Any:
    """The value kept on the alert: a scalar as it is, anything else as text, at most 200
    characters."""
    if cell is None or isinstance(cell, bool | int | float):
        return cell
    text = _text(cell)
    return text if len(text) <= 200 else text[:197] + "..."


def _message(alert: Alert, kind: str, cell: Any, run: ScheduleRun) -> str:
    shown = "NULL" if cell is None else _text(cell)
    shown = shown if len(shown) <= 200 else shown[:197] + "..."
    condition = f"{alert.column} {alert.operator} {alert.value}"
    query = alert.schedule.saved_query.name
    at = run.scheduled_for.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if kind == KIND_TRIGGERED:
        return (
            f"Alert [{alert.name}] triggered: {condition} holds ({alert.column} = {shown}) in "
            f"the run of saved query [{query}] scheduled for {at}."
        )
    return (
        f"Alert [{alert.name}] cleared: {condition} no longer holds ({alert.column} = "
        f"{shown}) in the run of saved query [{query}] scheduled for {at}."
    )


def _send(mails: list[tuple[str, str, str | None, list[str]]]) -> None:
    """One e-mail per subscriber (from ``DEFAULT_FROM_EMAIL``); a mail server's failure is
    logged, never the run's."""
    try:
        send_mass_mail(mails, fail_silently=False)
    except Exception:
        log.exception("alert e-mails could not be sent")
