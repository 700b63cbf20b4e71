"""This process's worker identity (``<node>/<pid>/<start id>``, made by ``jobs.worker`` when
the Celery worker is ready; None in other processes). A module of its own, without imports,
so that what checks which worker holds a job (a stream's commit, the executor, the
monitor) need not import the worker's heartbeat and maintenance."""

from __future__ import annotations

_identity: str | None = None


def current_identity() -> str | None:
    """This process's worker identity, once the worker is ready (else None)."""
    return _identity


def set_identity(identity: str | None) -> None:
    global _identity
    _identity = identity
