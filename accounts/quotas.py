"""The per-user quotas ``GET /users/me`` shows (each limit with its current use).

The limits and their counts live with what they limit (the jobs app: jobs, streams,
sessions, uploads); accounts depends on no other app, so it only names what it needs
(``Usage``) and the jobs app installs it at start (``JobsConfig.ready``). Without one, the
user has no quotas to show (``{}``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Quota = dict[str, int | None]
Usage = Callable[[Any], dict[str, Quota]]
"""A user's id → {quota name: {"limit": int or None (no limit), "used": int}}."""

_installed: list[Usage] = []


def install(usage: Usage) -> None:
    """Make ``usage`` the one ``GET /users/me`` asks (the jobs app, at start)."""
    _installed[:] = [usage]


def quotas_of(user_id: Any) -> dict[str, Quota]:
    return _installed[0](user_id) if _installed else {}
