"""Where a table's data lives: its file format, path and remaining options.

Used when a table is created (``CREATE TABLE … USING … OPTIONS … LOCATION``) and when it
is read (the relation's stored options), with the same guard rules both times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.errors import CoreError
from core.planner import guard
from core.planner.errors import ForbiddenSql

# Option keys (case-insensitive, as Spark reads them) that describe the source itself.
SOURCE_KEYS = ("connector", "format", "path")
_PATH_OPTIONS = ("basepath",)


@dataclass(frozen=True)
class TableSource:
    """A table's data: ``path`` is "" for a managed table until it has a location."""

    format: str
    path: str
    options: Mapping[str, str] = field(default_factory=dict)
    external: bool = False


def _lower_keys(options: Mapping[str, str]) -> dict[str, str]:
    seen: dict[str, str] = {}
    for key in options:
        lowered = key.lower()
        if lowered in seen:
            raise CoreError(
                f"The option '{key}' is given twice (as '{seen[lowered]}' and '{key}'); "
                "option keys are case-insensitive."
            )
        seen[lowered] = key
    return {lowered: options[key] for lowered, key in seen.items()}


def _check_other_options(options: Mapping[str, str], roots: Sequence[str]) -> dict[str, str]:
    """Options other than the source keys; path-like ones are guarded too."""
    rest: dict[str, str] = {}
    for key, value in options.items():
        lowered = key.lower()
        if lowered in SOURCE_KEYS:
            continue
        if lowered == "paths":
            raise ForbiddenSql(
                "The option 'paths' is not allowed: a table reads exactly one path, "
                "given as 'path' or LOCATION."
            )
        rest[key] = guard.check_storage_path(value, roots) if lowered in _PATH_OPTIONS else value
    return rest


def declared_source(
    using: str | None,
    options: Mapping[str, str],
    location: str | None,
    roots: Sequence[str],
) -> dict[str, str]:
    """The options to store for ``CREATE TABLE … USING using OPTIONS options LOCATION``.

    USING sets ``format`` (managed table) or ``connector`` (external: a path is given);
    ``path`` is normalised and must lie under the storage roots.
    """
    lowered = _lower_keys(options)
    path = lowered.get("path")
    if location is not None and path is not None:
        raise CoreError("Give the table path once: either LOCATION or the 'path' option.")
    if location is not None:
        path = location
    connector = lowered.get("connector")
    fmt = lowered.get("format")
    # The guard first: a non-file source is refused whatever else is wrong.
    if connector is not None:
        connector = guard.check_file_format(connector, "The connector")
    if fmt is not None:
        fmt = guard.check_file_format(fmt, "The table format")
    if using is not None:
        using_fmt = guard.check_file_format(using, "USING")
        for value in (connector, fmt):
            if value is not None and value.strip().lower() != using_fmt:
                raise CoreError(
                    f"USING {using} contradicts the option value '{value}'; give the format once."
                )
        fmt = using_fmt
    rest = _check_other_options(options, roots)
    if path is None and connector is None:
        if fmt is None:
            return rest
        return {"format": guard.check_file_format(fmt, "The table format"), **rest}
    if path is None:
        raise CoreError("An external table needs a path: add LOCATION '…' or a 'path' option.")
    source_fmt = connector if connector is not None else fmt
    if source_fmt is None:
        raise CoreError(
            "An external table needs a format: add USING "
            f"{'|'.join(guard.FILE_FORMATS)} or a 'connector' option."
        )
    if connector is not None and fmt is not None and fmt.strip().lower() != connector.lower():
        raise CoreError(
            f"The options 'connector' ('{connector}') and 'format' ('{fmt}') contradict each other."
        )
    return {
        "connector": guard.check_file_format(source_fmt, "The table format"),
        "path": guard.check_storage_path(path, roots),
        **rest,
    }


def stored_source(options: Mapping[str, str], location: str, roots: Sequence[str]) -> TableSource:
    """How to read a stored table: external tables are guarded again (the options may
    come from the REST API); managed tables read their warehouse location."""
    lowered = _lower_keys(options)
    rest = _check_other_options(options, roots)
    connector = lowered.get("connector")
    path = lowered.get("path")
    if connector is not None or path is not None:
        fmt = connector if connector is not None else lowered.get("format", "")
        return TableSource(
            guard.check_file_format(fmt, "The table format"),
            guard.check_storage_path(path or "", roots),
            rest,
            external=True,
        )
    fmt = lowered.get("format") or "parquet"
    return TableSource(guard.check_file_format(fmt, "The table format"), location, rest)
