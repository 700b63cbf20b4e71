"""Writes of dashboards and their tiles, and a tile's run. The views hand over rows the
selectors found for the caller (theirs or shared with them); a change is the owner's only.

A tile runs as its viewer, never as the dashboard's owner: its saved query goes through the
statements endpoint's own service (``sessions.statements.statement_submit``) in a session
of the viewer's, with the dashboard's parameter values bound as a statement's parameters
are (Spark binds them as literals). So the viewer's grants decide what each tile reads, and
a tile whose table the viewer may not SELECT fails alone with PERMISSION_DENIED.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User as UserModel
from django.db import transaction

from core.errors import CoreError, NotFound, PermissionDenied
from core.planner import parameters as query_parameters
from dashboards.limits import limit
from dashboards.models import GRID_COLUMNS, KINDS, Dashboard, Tile
from jobs.models import Job
from jobs.selectors import User, user_id
from sessions import services as session_services
from sessions import statements
from workbench import selectors as saved_queries
from workbench.services import check_chart, checked_label

# A parameter's default is shown in every viewer's input: text of at most this many characters.
MAX_DEFAULT_CHARS = 1000
_GRID = ("x", "y", "w", "h")


def _bad(message: str, field: str) -> CoreError:
    return CoreError(message, details={"field": field})


def _check_title(value: Any) -> str:
    return checked_label(
        value,
        field="title",
        missing="A dashboard needs a title.",
        named="A dashboard's title",
        max_length=limit("TESSERA_DASHBOARD_TITLE_MAX_CHARS"),
    )


def _check_refresh(value: Any) -> int | None:
    """Seconds between automatic refreshes (at least the server's floor), or None."""
    if value is None:
        return None
    floor = limit("TESSERA_DASHBOARD_MIN_REFRESH_SECONDS")
    if isinstance(value, bool) or not isinstance(value, int) or not floor <= value <= 86_400:
        raise _bad(
            f"refresh_interval_seconds must be a whole number of seconds from {floor} to "
            "86400 (a day), or null (refresh by hand only).",
            "refresh_interval_seconds",
        )
    return int(value)


def _check_parameters(value: Any) -> list[dict[str, Any]]:
    """``[{"name", "default"}]``: names as a statement's parameters' (plain identifiers,
    distinct case-insensitively), defaults a string, number, boolean or null."""
    most = limit("TESSERA_DASHBOARD_MAX_PARAMETERS")
    if not isinstance(value, list) or len(value) > most:
        raise _bad(f"parameters must be a list of at most {most} {{name, default}}.", "parameters")
    defaults: dict[str, Any] = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or set(item) - {"name", "default"} or "name" not in item:
            raise _bad(
                f"parameters[{index}] must be an object {{name, default}}.", f"parameters.{index}"
            )
        name, default = item["name"], item.get("default")
        if isinstance(name, str) and name in defaults:
            raise _bad(f"Parameter :{name[:128]} is declared twice.", f"parameters.{index}")
        if isinstance(default, str) and len(default) > MAX_DEFAULT_CHARS:
            raise _bad(
                f"A parameter's default must be at most {MAX_DEFAULT_CHARS} characters.",
                f"parameters.{index}",
            )
        defaults[name] = default
    checked = query_parameters.check_values(defaults)  # names and values as a statement's
    return [{"name": name, "default": default} for name, default in checked.items()]


def _ensure_owner(user: User, row: Dashboard) -> None:
    if row.owner_id != user_id(user):
        raise PermissionDenied(
            f"Dashboard [{row.title}] belongs to {row.owner.get_username()}; only its owner "
            "may change it."
        )


def dashboard_create(
    *,
    user: User,
    title: Any,
    shared: bool = False,
    refresh_interval_seconds: Any = None,
    parameters: Any = None,
) -> Dashboard:
    owner = user_id(user)
    row = Dashboard(
        owner_id=owner,
        title=_check_title(title),
        shared=bool(shared),
        refresh_interval_seconds=_check_refresh(refresh_interval_seconds),
        parameters=_check_parameters([] if parameters is None else parameters),
    )
    most = limit("TESSERA_DASHBOARDS_PER_USER")
    with transaction.atomic():
        # The owner's row locked: two concurrent creates cannot both pass the count.
        UserModel.objects.select_for_update().filter(pk=owner).first()
        if Dashboard.objects.filter(owner_id=owner).count() >= most:
            raise _bad(f"You have {most} dashboards, the most a user may have.", "title")
        row.save()
    return row


def dashboard_update(*, user: User, row: Dashboard, changes: dict[str, Any]) -> Dashboard:
    """PATCH: any of ``title``, ``shared``, ``refresh_interval_seconds``, ``parameters``."""
    _ensure_owner(user, row)
    if "title" in changes:
        row.title = _check_title(changes["title"])
    if "shared" in changes:
        row.shared = bool(changes["shared"])
    if "refresh_interval_seconds" in changes:
        row.refresh_interval_seconds = _check_refresh(changes["refresh_interval_seconds"])
    if "parameters" in changes:
        row.parameters = _check_parameters(changes["parameters"])
    row.save()
    return row


def dashboard_delete(*, user: User, row: Dashboard) -> None:
    _ensure_owner(user, row)
    row.delete()


# --- tiles --------------------------------------------------------------------------------


def _check_grid(values: dict[str, Any]) -> dict[str, int]:
    """x, y, w, h on the 12-column grid: inside it, and no taller or lower than the limits."""
    for name in _GRID:
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(f"{name} must be a whole number.", name)
    x, y, w, h = (values[name] for name in _GRID)
    max_row, max_h = limit("TESSERA_DASHBOARD_MAX_ROW"), limit("TESSERA_DASHBOARD_MAX_TILE_HEIGHT")
    if not 1 <= w <= GRID_COLUMNS:
        raise _bad(f"w must be from 1 to {GRID_COLUMNS} columns.", "w")
    if not 0 <= x <= GRID_COLUMNS - w:
        raise _bad(f"x must be from 0 to {GRID_COLUMNS - w}: the tile must fit 12 columns.", "x")
    if not 0 <= y <= max_row:
        raise _bad(f"y must be from 0 to {max_row}.", "y")
    if not 1 <= h <= max_h:
        raise _bad(f"h must be from 1 to {max_h} rows.", "h")
    return {"x": x, "y": y, "w": w, "h": h}


def _check_kind(value: Any) -> str:
    if value not in KINDS:
        raise _bad(f"kind must be one of {', '.join(KINDS)}.", "kind")
    return str(value)


def _query_for(user: User, query_id: Any) -> Any:
    """A saved query the dashboard's owner may read (theirs, or shared with them)."""
    try:
        return saved_queries.saved_query_get(user=user, query_id=query_id)
    except NotFound as exc:
        raise _bad(f"Saved query {str(query_id)[:100]} does not exist.", "saved_query") from exc


def tile_create(*, user: User, dashboard: Dashboard, values: dict[str, Any]) -> Tile:
    """A tile of a saved query the owner may read; ``values``: saved_query, kind, chart, x, y,
    w, h (the grid's defaults for those left out)."""
    _ensure_owner(user, dashboard)
    place = {"x": 0, "y": 0, "w": 6, "h": 4, **{k: values[k] for k in _GRID if k in values}}
    row = Tile(
        dashboard=dashboard,
        saved_query=_query_for(user, values.get("saved_query")),
        kind=_check_kind(values.get("kind", "table")),
        chart=check_chart(values.get("chart")),
        **_check_grid(place),
    )
    most = limit("TESSERA_DASHBOARD_MAX_TILES")
    with transaction.atomic():
        Dashboard.objects.select_for_update().filter(pk=dashboard.pk).first()
        if Tile.objects.filter(dashboard=dashboard).count() >= most:
            raise _bad(f"A dashboard may have at most {most} tiles.", "saved_query")
        row.save()
    return row


def tile_update(*, user: User, dashboard: Dashboard, row: Tile, changes: dict[str, Any]) -> Tile:
    """PATCH: any of saved_query, kind, chart, x, y, w, h."""
    _ensure_owner(user, dashboard)
    if "saved_query" in changes:
        row.saved_query = _query_for(user, changes["saved_query"])
    if "kind" in changes:
        row.kind = _check_kind(changes["kind"])
    if "chart" in changes:
        row.chart = check_chart(changes["chart"])
    place = _check_grid({k: changes.get(k, getattr(row, k)) for k in _GRID})
    for name, value in place.items():
        setattr(row, name, value)
    row.save()
    return row


def tile_delete(*, user: User, dashboard: Dashboard, row: Tile) -> None:
    _ensure_owner(user, dashboard)
    row.delete()


# --- a tile's run -------------------------------------------------------------------------


def parameter_values(dashboard: Dashboard, sent: Any) -> dict[str, Any]:
    """The dashboard's parameters' defaults, replaced by the viewer's values (``sent``) for
    declared names only (case-insensitively)."""
    values = query_parameters.check_values(sent)
    declared = {p["name"].lower(): p["name"] for p in dashboard.parameters}
    bound = {p["name"]: p["default"] for p in dashboard.parameters}
    for name, value in values.items():
        if name.lower() not in declared:
            raise _bad(f"Dashboard [{dashboard.title}] has no parameter :{name}.", "parameters")
        bound[declared[name.lower()]] = value
    return bound


def tile_run(
    *,
    user: User,
    dashboard: Dashboard,
    tile: Tile,
    parameters: Any = None,
    session: Any = None,
    wait: float | None = 0,
) -> Job:
    """Run the tile's saved query as ``user`` (the viewer): in ``session`` (one of theirs) or
    a new session of theirs that starts where their workspace does. Each of the query's
    ``:name`` markers gets the dashboard parameter of that name; a marker the dashboard does
    not declare is refused as a statement's would be (VALIDATION_ERROR naming it)."""
    query = tile.saved_query
    if not saved_queries.visible(user).filter(pk=query.pk).exists():
        raise PermissionDenied(
            f"Saved query [{query.name}] of this tile is not shared with you: ask "
            f"{query.owner.get_username()} to share it with your team."
        )
    values = parameter_values(dashboard, parameters)
    used = {m.lower() for m in query_parameters.marker_names(query.sql)} if values else set()
    bound = {name: value for name, value in values.items() if name.lower() in used}
    found = (
        session_services.session_get(user=user, session_id=session)
        if session is not None
        else session_services.session_open(user=user, start="workspace")[0]
    )
    return statements.statement_submit(
        session=found, sql=query.sql, wait=wait, parameters=bound or None
    )
