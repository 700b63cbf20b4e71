"""Table locations as Hadoop reads them: a conservative, pure check of a path's text.

Spark hands a table's path to ``org.apache.hadoop.fs.Path``, which reads a scheme before the
first ``:``, an authority after a leading ``//``, removes ``.`` and ``..`` segments
(``java.net.URI.normalize()``), and Spark globs any load path containing ``{}[]*?\\`` —
where a backslash escapes the next character, so ``\\.\\.`` becomes ``..`` again. A path
whose Hadoop reading could differ from its plain reading is therefore refused here, before
it is compared with the storage roots: what is checked is exactly what Hadoop will open.

This module only reads text (no file system, no JVM). Symbolic links are resolved where
the files are (``catalog/storage.py`` on the web side, ``jobs/executor/locations.py`` on a
worker, which also asks Hadoop itself how it reads the path).
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Sequence

from core.errors import CoreError

FIELD = "options.path"

# Characters that make Hadoop or Spark read a path differently from its plain text, and why.
_SPECIAL: dict[str, str] = {
    "\\": "a backslash escapes the next character when Hadoop globs the path",
    **{
        char: f"glob characters ('{char}') make Hadoop match paths, possibly outside the "
        "storage roots"
        for char in "*?[]{}"
    },
    "%": "'%' starts a percent-encoded character, which some layers decode",
    ":": "a ':' lets Hadoop read a scheme (a file system) from the path",
    "#": "'#' starts a URI fragment",
}


class LocationRefused(CoreError):
    """A table path refused by the storage boundary (code VALIDATION_ERROR; the SQL
    planner reports it as FORBIDDEN_SQL). ``details``: ``field`` and ``path``."""


def _refuse(raw: str, reason: str, field: str) -> LocationRefused:
    return LocationRefused(
        f"The path '{_shown(raw)}' is not allowed: {reason}.",
        details={"field": field, "path": raw},
    )


def _shown(raw: str) -> str:
    """The path as a person can read it in a message (control characters made visible)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in raw)


def _bad_character(text: str, allowed: str = "") -> tuple[str, str] | None:
    """The first character that could change how the path is read, with the reason."""
    for char in text:
        if char in allowed:
            continue
        if char in _SPECIAL:
            return char, _SPECIAL[char]
        category = unicodedata.category(char)
        # Cc control, Cf format (zero-width, bidi overrides), Cs/Co/Cn, Zl/Zp line breaks.
        if category[0] == "C" or category in ("Zl", "Zp"):
            return char, "it contains a control or invisible character"
    return None


def local_path(raw: str, *, field: str = FIELD, allow_percent: bool = False) -> str:
    """The absolute local path ``raw`` names, when Hadoop reads it exactly like that.

    Accepted: ``/abs/dir``, ``file:/abs/dir`` and ``file:///abs/dir`` (a trailing ``/`` is
    dropped). Refused: other schemes, authorities (``file://host/…``, ``//host/…``),
    relative paths, empty, ``.`` and ``..`` segments, ``//``, glob characters, backslashes,
    ``%``, ``:``, ``#`` and control or invisible characters. ``allow_percent``: the
    warehouse's own directory names percent-encode table names (Hadoop keeps ``%`` as is).
    """
    if not isinstance(raw, str) or not raw.strip():
        raise LocationRefused("The option 'path' must not be empty.", details={"field": field})
    text = raw.strip(" ")
    if text.startswith("file:"):
        rest = text[len("file:") :]
        if rest.startswith("//"):
            if not rest.startswith("///"):
                raise _refuse(
                    raw, "a file URI with an authority (a host) is not a local path", field
                )
            rest = rest[2:]
        text = rest
    elif ":" in text.split("/", 1)[0]:
        raise _refuse(
            raw,
            "it is not a local path (only file: paths under the storage roots can hold table data)",
            field,
        )
    bad = _bad_character(text, "%" if allow_percent else "")
    if bad is not None:
        raise _refuse(raw, bad[1], field)
    if not text.startswith("/"):
        raise LocationRefused(
            f"The path '{_shown(raw)}' must be absolute.", details={"field": field, "path": raw}
        )
    if text.startswith("//"):
        raise _refuse(raw, "a leading '//' makes Hadoop read a host name (an authority)", field)
    body = text[:-1] if len(text) > 1 and text.endswith("/") else text
    segments = body.split("/")[1:]
    if "" in segments and body != "/":
        raise _refuse(raw, "empty segments ('//') are not allowed in paths", field)
    if any(segment in (".", "..") for segment in segments):
        raise LocationRefused(
            f"The path '{_shown(raw)}' must not contain '..' segments (nor '.'): Hadoop "
            "removes them, so the path it reads is not the one written.",
            details={"field": field, "path": raw},
        )
    return body


def normal_root(root: str) -> str:
    """A storage root as an absolute, normalised directory (configured by the admin)."""
    return "/" + posixpath.normpath(str(root)).lstrip("/")


def is_under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both absolute and normalised)."""
    base = normal_root(root)
    return path == base or path.startswith(base.rstrip("/") + "/")


def outside_roots(raw: str, roots: Sequence[str], field: str = FIELD) -> LocationRefused:
    """The error for a path under none of ``roots``."""
    shown = ", ".join(normal_root(r) for r in roots) if roots else "none configured"
    return LocationRefused(
        f"The path '{_shown(raw)}' lies outside the storage roots this server may use; "
        f"external tables must live under TESSERA_STORAGE_ROOTS. Allowed storage roots: "
        f"{shown}.",
        details={"field": field, "path": raw},
    )


def check_location(raw: str, roots: Sequence[str], *, field: str = FIELD) -> str:
    """The normalised local path of an external table, under one of ``roots``; refuse
    anything else (see ``local_path``). Symbolic links are not looked at here."""
    path = local_path(raw, field=field)
    if any(is_under(path, root) for root in roots):
        return path
    raise outside_roots(raw, roots, field)
