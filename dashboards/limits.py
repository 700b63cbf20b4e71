"""The room's settings, read where they are used (webapp/settings.py stays within its size):
each ``TESSERA_DASHBOARD_*`` from Django's settings when set there (tests), else from the
environment, else the default."""

from __future__ import annotations

import os

from django.conf import settings

from dashboards.models import MAX_TITLE_LENGTH

DEFAULTS = {
    # Dashboards one user may own; tiles on one dashboard; parameters of one dashboard.
    "TESSERA_DASHBOARDS_PER_USER": 100,
    "TESSERA_DASHBOARD_MAX_TILES": 30,
    "TESSERA_DASHBOARD_MAX_PARAMETERS": 20,
    # Characters of a title (at most the column's MAX_TITLE_LENGTH).
    "TESSERA_DASHBOARD_TITLE_MAX_CHARS": MAX_TITLE_LENGTH,
    # The shortest automatic refresh interval: every viewer's browser reruns every tile.
    "TESSERA_DASHBOARD_MIN_REFRESH_SECONDS": 60,
    # The highest grid row a tile may start on, and the most rows it may span.
    "TESSERA_DASHBOARD_MAX_ROW": 1000,
    "TESSERA_DASHBOARD_MAX_TILE_HEIGHT": 24,
}


def limit(name: str) -> int:
    """The setting ``name`` (one of ``DEFAULTS``) as an int."""
    value: object = getattr(settings, name, None)
    number = int(str(os.environ.get(name, DEFAULTS[name]) if value is None else value))
    if name == "TESSERA_DASHBOARD_TITLE_MAX_CHARS":
        return min(number, MAX_TITLE_LENGTH)
    return number
