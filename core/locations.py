"""Table locations as Hadoop reads them: a conservative, pure check of a path's text.

Spark hands a table's path to ``org.apache.hadoop.fs.Path``, which reads a scheme before the
first ``:``, an authority after a leading ``//``, removes ``.`` and ``..`` segments
(``java.net.URI.normalize()``), and Spark globs any load path containing ``{}[]*?\\`` —
where a backslash escapes the next character, so ``\\.\\.`` becomes ``..`` again. A path
whose Hadoop reading could differ from its plain reading is therefore refused here, before
it is compared with the storage roots: what is checked is exactly what Hadoop will open.

A storage root itself, or a path holding one, is never a table's path: overwriting such a
table would delete every table below it. Two tables' paths may not overlap either (equal,
or one inside the other: Unity Catalog's rule); ``overlap`` and ``ancestors`` are the pure
half of that check, the catalog's indexed query is the other (``catalog/storage.py``).

This module only reads text (no file system, no JVM). Symbolic links are resolved where
the files are (``catalog/storage.py`` on the web side, ``engine/locations.py`` on a
worker, which also asks Hadoop itself how it reads the path).
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Literal

from core.errors import CoreError

FIELD = "options.path"
# A table path is stored in an indexed column (``Table.data_path``); PostgreSQL's btree
# entries hold at most ~2,700 bytes. Far above any real directory name, well below that.
MAX_PATH_BYTES = 1024

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


def comparable(raw: str) -> str:
    """A stored path in the form paths are compared in, even when today's rules would
    refuse it (rows stored before them): ``file:`` dropped, ``.``/``..``/``//`` folded as
    ``normpath`` does; "" when it is not an absolute local path at all."""
    try:
        return local_path(raw)
    except LocationRefused:
        pass
    text = str(raw).strip(" ")
    for prefix in ("file://", "file:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    if not text.startswith("/"):
        return ""
    return "/" + posixpath.normpath(text).lstrip("/")


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
    """The normalised local path of an external table, strictly below one of ``roots`` and
    holding none of them; refuse anything else (see ``local_path``). Symbolic links are not
    looked at here."""
    path = local_path(raw, field=field)
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise _refuse(raw, f"table paths are at most {MAX_PATH_BYTES} bytes long", field)
    if not any(is_under(path, root) for root in roots):
        raise outside_roots(raw, roots, field)
    check_not_a_root(path, roots, raw, field)
    return path


def check_not_a_root(path: str, roots: Sequence[str], raw: str, field: str = FIELD) -> None:
    """Refuse ``path`` when it is a storage root or holds one: its table would own every
    table below it (an INSERT OVERWRITE would delete them)."""
    for root in roots:
        if is_under(normal_root(root), path):
            what = "is a storage root" if normal_root(root) == path else "holds a storage root"
            raise _refuse(
                raw,
                f"it {what} ({normal_root(root)}); a table's data lives in a directory of "
                "its own below a root",
                field,
            )


# --- overlapping tables (Unity Catalog: no two tables' locations overlap) -----------------

Overlap = Literal["equals", "contains", "inside"]


def overlap(path: str, other: str) -> Overlap | None:
    """How ``path`` relates to ``other`` (both normalised, absolute): the same directory,
    ``path`` holding ``other``, ``path`` inside ``other``; None when they are apart."""
    if not path or not other:
        return None
    if path == other:
        return "equals"
    if is_under(other, path):
        return "contains"
    if is_under(path, other):
        return "inside"
    return None


def ancestors(path: str) -> list[str]:
    """``path`` and every directory above it, up to ``/``: the paths a table would lie
    inside of (or equal to)."""
    found = [path]
    while path not in ("/", ""):  # "": a relative path (callers pass absolute ones)
        path = posixpath.dirname(path)
        found.append(path)
    return found


def overlap_message(raw: str, how: Overlap, other_path: str, other: str) -> str:
    """The refusal of a path that overlaps ``other``'s (``other``: "table `c`.`d`.`t`", or
    a phrase such as "another table" when the user may not see it)."""
    relation = {
        "equals": f"is the path of {other}",
        "contains": f"holds the path of {other} ('{_shown(other_path)}')",
        "inside": f"lies inside the path of {other} ('{_shown(other_path)}')",
    }[how]
    return (
        f"The path '{_shown(raw)}' {relation}: a table's files may not equal, contain or lie "
        "inside another table's, since writing one would change the other."
    )


class PathOverlap(LocationRefused):
    """A table path that equals, contains or lies inside another table's. ``details``:
    ``field``, ``path``, ``overlaps`` (``{"table", "path", "relation"}``)."""


# --- the server's own directories ----------------------------------------------------------


def check_storage_roots(
    roots: Sequence[str], data_dir: str, protected: Mapping[str, str]
) -> list[str]:
    """What is wrong with the configured storage roots (empty when nothing).

    Each root must be a path ``local_path`` accepts (else no table under it could be
    checked). None may equal or hold ``data_dir`` (the secret key, the SQLite file, the
    results, the broker's messages live there); a root below it is fine as long as it
    stays apart from every ``protected`` directory (name -> path: the warehouse, results,
    broker, static files, and the SQLite file when it lives elsewhere), which no root may
    equal, hold or lie inside. Paths are compared as given: the caller resolves symbolic
    links first.
    """
    problems: list[str] = []
    relation = {"equals": "is", "contains": "holds", "inside": "lies inside"}
    for root in roots:
        try:
            path = local_path(str(root), field="TESSERA_STORAGE_ROOTS")
        except LocationRefused as exc:
            problems.append(f"TESSERA_STORAGE_ROOTS: {exc.message}")
            continue
        checks = {"TESSERA_DATA_DIR": str(data_dir), **protected}
        for name, directory in checks.items():
            how = overlap(path, normal_root(directory))
            if how is None or (how == "inside" and name == "TESSERA_DATA_DIR"):
                continue
            problems.append(
                f"TESSERA_STORAGE_ROOTS: the root '{path}' {relation[how]} {name} "
                f"({directory}); external tables there could read or overwrite the "
                "server's own files. Use a directory apart from it."
            )
            break  # one reason per root is enough to act on
    return problems
