"""Where table data lives: managed tables in the warehouse, external ones under storage roots.

A managed table owns one warehouse directory, created with the table and deleted with it.
An external table's ``path`` must read the same to Hadoop as to us (``core.locations``:
no globs, escapes, schemes, ``..``), lie strictly below one of ``TESSERA_STORAGE_ROOTS``
(never a root itself) with its symbolic links resolved — the path's own and every link
inside its directory tree — and overlap no other table's path (``check_no_overlap``). Its
files are never touched by Tessera except by the writes of ``tabledata.commit``. The check runs
at creation and again at every use (``resolved_external_path``, which the worker passes to
Spark).

Cost of the link check (docs/security.md §2): a directory's links can only change when the
directory itself changes, so what a scan found is kept per directory with its identity and
times (``_scan``); a later check costs one ``stat`` per directory of the tree, and lists
again only the directories that changed.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection
from django.db.models import Q

from core import locations
from core.identifiers import quote_path

if TYPE_CHECKING:
    from catalog.models import Table


def warehouse_location(catalog: str, database: str, table: str) -> Path:
    """A new, unique directory for a managed table (a suffix keeps re-created names apart)."""

    def part(name: str) -> str:
        return quote(name.lower(), safe="")

    suffix = uuid.uuid4().hex[:8]
    return Path(settings.WAREHOUSE_DIR) / part(catalog) / part(database) / f"{part(table)}-{suffix}"


def create_location(location: str) -> None:
    Path(location).mkdir(parents=True, exist_ok=True)


def delete_location(location: str) -> None:
    """Delete a managed table's directory; refuse anything outside the warehouse."""
    path = Path(location).resolve()
    warehouse = Path(settings.WAREHOUSE_DIR).resolve()
    if path == warehouse or warehouse not in path.parents:
        raise RuntimeError(f"Refusing to delete {path}: it is not a table directory.")
    shutil.rmtree(path, ignore_errors=True)


def storage_roots() -> list[str]:
    """The configured storage roots as written (normalised, absolute)."""
    return [locations.normal_root(str(root)) for root in settings.TESSERA_STORAGE_ROOTS]


def _real(path: str) -> str:
    # Follows every symbolic link of the parts that exist now; the rest is kept as written.
    return os.path.realpath(path)


def _under_any(path: str, roots: list[str]) -> bool:
    return any(locations.is_under(path, root) for root in roots)


# --- symbolic links inside a table's tree --------------------------------------------------


@dataclass(frozen=True)
class _Scanned:
    """One directory as last listed: its identity and times when it was listed, its plain
    subdirectories and its symbolic links (whose targets are resolved at every check)."""

    signature: tuple[int, int, int, int]
    subdirectories: tuple[str, ...]
    links: tuple[str, ...]


# Directory (a real path) -> what its last listing found. Per process; bounded.
_SCANNED: dict[str, _Scanned] = {}
_SCANNED_LIMIT = 200_000
# A directory changed this recently is not kept: its times have a coarse granularity, so a
# change right after the listing could leave them as they were ("racy git").
_SETTLE_NS = 2_000_000_000


def _scan(directory: str) -> _Scanned | None:
    """The subdirectories and links of ``directory``, listed again only when it changed
    since the last listing (adding, removing or replacing an entry changes a directory's
    mtime and ctime; a directory replaced by another has another inode). None: not a
    directory (gone, unreadable: Spark reads nothing there either)."""
    try:
        info = os.stat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    signature = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
    known = _SCANNED.get(directory)
    if known is not None and known.signature == signature:
        return known
    subdirectories: list[str] = []
    links: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_symlink():
                    links.append(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    subdirectories.append(entry.path)
    except OSError:
        return None
    scanned = _Scanned(signature, tuple(subdirectories), tuple(links))
    if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _SETTLE_NS:
        if len(_SCANNED) >= _SCANNED_LIMIT:
            _SCANNED.clear()
        _SCANNED[directory] = scanned
    return scanned


def escaping_link(top: str, real_roots: list[str], *, remember: bool = True) -> str | None:
    """The first symbolic link inside the directory tree ``top`` whose target lies outside
    ``real_roots`` (Hadoop's local file system follows links when it lists and reads), or
    None. Directories reached through links inside the roots are searched too, once.

    ``remember``: reuse the listings of directories that did not change (``_scan``); a
    directory written a moment ago (a job's staging) is listed afresh either way."""
    pending = [top]
    seen: set[str] = set()
    while pending:
        directory = pending.pop()
        if directory in seen:
            continue
        seen.add(directory)
        if not remember:
            _SCANNED.pop(directory, None)
        scanned = _scan(directory)
        if scanned is None:
            continue
        pending.extend(scanned.subdirectories)
        for link in scanned.links:
            target = _real(link)
            if not _under_any(target, real_roots):
                return link
            if os.path.isdir(target):
                pending.append(target)
    return None


def _refuse_link(raw: str, link: str, where: str, field: str) -> locations.LocationRefused:
    return locations.LocationRefused(
        f"The path '{raw}' holds a symbolic link ({link}) that leads outside {where}; "
        "Spark would follow it.",
        details={"field": field, "path": raw},
    )


def check_resolved(path: str, roots: list[str], raw: str, field: str, *, tree: bool = True) -> str:
    """``path`` (already checked as text) with its symbolic links resolved now: it must
    stay strictly below a root (never a root itself), read the same to Hadoop, and — with
    ``tree`` — hold no link leading out; returns the resolved path (what to hand to Spark).
    Without ``tree`` only the path's own links are followed: a few ``lstat`` calls."""
    real_roots = [_real(root) for root in roots]
    real = _real(path)
    if not _under_any(real, real_roots):
        raise locations.outside_roots(raw, roots, field)
    # The target of a link must itself be a path Hadoop reads as written.
    locations.local_path(real, field=field)
    if len(real.encode("utf-8")) > locations.MAX_PATH_BYTES:
        raise locations.LocationRefused(
            f"The path '{raw}' leads to a path longer than {locations.MAX_PATH_BYTES} bytes.",
            details={"field": field, "path": raw},
        )
    locations.check_not_a_root(real, real_roots, raw, field)
    if tree:
        link = escaping_link(real, real_roots)
        if link is not None:
            raise _refuse_link(raw, link, "the storage roots", field)
    return real


def check_tree(top: str, *, managed: bool, field: str = "location") -> None:
    """Refuse a directory a job just wrote (its staging) when a symbolic link inside leads
    out of the warehouse (``managed``) or the storage roots. Listed afresh: it is the job's
    own output, so the cost is that of what the job wrote. Run before the commit's
    transaction, which then lists nothing but what it moves."""
    if managed:
        within, where = [locations.normal_root(str(settings.WAREHOUSE_DIR))], "the warehouse"
    else:
        within, where = storage_roots(), "the storage roots"
    link = escaping_link(_real(top), [_real(path) for path in within], remember=False)
    if link is not None:
        raise _refuse_link(top, link, where, field)


def normalize_external_path(raw: str, field: str = "options.path", *, tree: bool = True) -> str:
    """Validate an external table's ``path`` option and return its normalised form (as
    written, links not replaced: what the catalog stores). ``tree``: see ``check_resolved``
    (creation looks at the whole tree; a use that only needs the path passes False)."""
    roots = storage_roots()
    path = locations.check_location(raw, roots, field=field)
    check_resolved(path, roots, raw, field, tree=tree)
    return path


def resolved_external_path(raw: str, field: str = "options.path") -> str:
    """Check an external table's path now, at use, and return it with its links resolved,
    so that what Spark opens is the directory that was checked."""
    roots = storage_roots()
    path = locations.check_location(raw, roots, field=field)
    return check_resolved(path, roots, raw, field)


# --- no two tables' paths overlap -------------------------------------------------------------

# pg_advisory_xact_lock key: creations of tables with paths, one at a time (ASCII "tessera1").
_PATHS_LOCK = 0x7465737365726131


def lock_table_paths() -> None:
    """Serialise the check-then-save of tables' paths until the transaction ends, so two
    overlapping tables created at the same moment cannot both pass. PostgreSQL: an
    advisory lock; SQLite runs its transactions IMMEDIATE (webapp/settings.py), one writer
    at a time already."""
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PATHS_LOCK])


def _below(column: str, path: str) -> Q:
    """Rows whose ``column`` lies strictly below ``path``: a prefix query an index serves
    (PostgreSQL: ``LIKE 'p/%'`` on the varchar_pattern_ops index Django makes for
    ``db_index``; SQLite: the same prefix as a range on its BINARY b-tree, since its LIKE
    ignores case and cannot use that index)."""
    prefix = path.rstrip("/") + "/"
    if connection.vendor == "sqlite":
        # '0' follows '/': with byte order, exactly the strings starting with the prefix.
        return Q(**{f"{column}__gte": prefix, f"{column}__lt": prefix[:-1] + "0"})
    return Q(**{f"{column}__startswith": prefix})


@dataclass(frozen=True)
class Overlapping:
    """Another table whose data overlaps a path: how the path relates to it."""

    table: Table
    how: locations.Overlap
    path: str  # the other table's path (as stored, or resolved)

    def visible_to(self, user: Any) -> bool:
        """Whether ``user`` may see the other table (ADR 0011): only then is it named."""
        if user is None:
            return False
        from catalog import access

        return access.is_visible(access.access_for(user), access.relation_securable(self.table))

    def identifier(self) -> list[str]:
        return [self.table.database.catalog.name, self.table.database.name, self.table.name]

    def shown(self, user: Any = None) -> str:
        """ "table `c`.`d`.`t`" to a ``user`` who may see it; else "another table" (the
        user learns that the path is taken, not by what)."""
        if self.visible_to(user):
            return "table " + quote_path(self.identifier())
        return "another table"

    def details(self, user: Any = None) -> dict[str, Any]:
        """``details.overlaps``: ``table`` only for a ``user`` who may see it."""
        out: dict[str, Any] = {"path": self.path, "relation": self.how}
        if self.visible_to(user):
            out = {"table": self.identifier(), **out}
        return out


def find_overlap(path: str, *, exclude: Q | None = None, reader: Any = None) -> Overlapping | None:
    """The first table (by id) whose path equals, holds or lies inside ``path`` (normalised
    text), ``path``'s links resolved now included; compared with every external table's
    stored path and its resolved form. ``exclude``: the table itself. Two indexed lookups:
    ``path``'s ancestors (equality) and its descendants (a prefix).

    ``reader``: the user of a temporary table, which only reads its files. A table whose
    path is exactly ``path`` and which ``reader`` may SELECT from is not in the way (reading
    the same files is reading that table); holding or lying inside one still is."""
    from catalog.models import Table

    candidates = sorted({path, _real(path)} - {""})
    above = sorted({a for c in candidates for a in locations.ancestors(c)})
    query = Q(data_path__in=above) | Q(data_real_path__in=above)
    for candidate in candidates:
        query |= _below("data_path", candidate) | _below("data_real_path", candidate)
    rows = Table.objects.filter(query, kind=Table.KIND_TABLE)
    if exclude is not None:
        rows = rows.exclude(exclude)
    for row in rows.select_related("database__catalog").order_by("pk")[:50]:
        found = [
            Overlapping(row, how, other)
            for candidate in candidates
            for other in (row.data_path, row.data_real_path)
            if (how := locations.overlap(candidate, other)) is not None
        ]
        if found and not (reader is not None and _shared_read(found, reader)):
            return found[0]
    return None


def _shared_read(found: Sequence[Overlapping], reader: Any) -> bool:
    """Whether a temporary table of ``reader`` may read the files of ``found``'s table: the
    same directory (in one of its forms), and ``reader`` may SELECT from that table."""
    if not any(o.how == "equals" for o in found):
        return False
    from catalog import access

    return access.shows_figures(access.access_for(reader), found[0].table)


def apart_from_warehouse(raw: str, path: str, field: str = "options.path") -> None:
    """Refuse an external path that equals, holds or lies inside the warehouse (where every
    managed table's directory lies: one check covers them all), its links resolved too.
    Storage roots are kept apart from it at start (webapp/settings.py), so this only
    catches a misconfiguration — checked anyway."""
    warehouse = locations.normal_root(str(settings.WAREHOUSE_DIR))
    for candidate, base in ((path, warehouse), (_real(path), _real(warehouse))):
        how = locations.overlap(candidate, base)
        if how is not None:
            raise locations.PathOverlap(
                locations.overlap_message(raw, how, base, "the warehouse of managed tables"),
                details={"field": field, "path": raw},
            )


def check_no_overlap(
    raw: str,
    path: str,
    *,
    exclude: Q | None = None,
    field: str = "options.path",
    user: Any = None,
    reader: Any = None,
) -> None:
    """Refuse ``path`` (an external table's, normalised) when it equals, holds or lies
    inside another table's path or the warehouse (Unity Catalog's rule: a table's files
    are its own, so writing one table never changes another). The other table is named
    (message, ``details.overlaps.table``) only to a ``user`` who may see it; without a
    user it is "another table". ``reader``: see ``find_overlap`` (temporary tables)."""
    apart_from_warehouse(raw, path, field)
    found = find_overlap(path, exclude=exclude, reader=reader)
    if found is not None:
        raise locations.PathOverlap(
            locations.overlap_message(raw, found.how, found.path, found.shown(user)),
            details={"field": field, "path": raw, "overlaps": found.details(user)},
        )


def check_table_apart(table: Table, *, user: Any = None) -> None:
    """Refuse writing ``table`` when its files are (also) another table's: an external
    table's path that equals, holds or lies inside another table's path or the warehouse,
    or a managed table's directory that an external table's path reaches. Rows stored
    before paths could not overlap are caught here, at every write (planning, the
    commit); a row with no comparable path is left to the path check, which refuses it.
    The other table is named only to a ``user`` who may see it (``check_no_overlap``)."""
    if table.managed:
        path = locations.comparable(table.location) if table.location else ""
        found = find_overlap(path, exclude=Q(pk=table.pk)) if path else None
        if found is not None:
            raise locations.PathOverlap(
                locations.overlap_message(path, found.how, found.path, found.shown(user)),
                details={"field": "location", "path": path},
            )
        return
    from catalog.models import data_paths

    path, _ = data_paths(table.kind, table.options)  # from the options: the row may be old
    if path:
        # A root (or a path holding one) first: that says more than the tables below it.
        locations.check_not_a_root(path, storage_roots(), path)
        check_no_overlap(path, path, exclude=Q(pk=table.pk), user=user)


def same_table(identifier: Sequence[str]) -> Q:
    """The filter of one table by its three-part name (to exclude it from ``find_overlap``)."""
    c, d, n = (str(part).lower() for part in identifier)
    return Q(database__catalog__name_key=c, database__name_key=d, name_key=n)


def resolved_managed_location(location: str) -> str:
    """A managed table's (or a job's staging) directory, checked to lie in the warehouse
    with its links resolved; returns the resolved directory."""
    warehouse = locations.normal_root(str(settings.WAREHOUSE_DIR))
    field = "location"
    # The warehouse's directory names percent-encode table names; Hadoop keeps '%' as is.
    path = locations.local_path(location, field=field, allow_percent=True)
    if not locations.is_under(path, warehouse) or path == warehouse:
        raise locations.LocationRefused(
            f"The location '{location}' is not a table directory in the warehouse.",
            details={"field": field, "path": location},
        )
    real_warehouse = _real(warehouse)
    real = _real(path)
    if not locations.is_under(real, real_warehouse) or real == real_warehouse:
        raise locations.LocationRefused(
            f"The location '{location}' leads outside the warehouse.",
            details={"field": field, "path": location},
        )
    locations.local_path(real, field=field, allow_percent=True)
    link = escaping_link(real, [real_warehouse])
    if link is not None:
        raise _refuse_link(location, link, "the warehouse", field)
    return real
