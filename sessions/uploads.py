"""Uploads: data a session's user sends (an Arrow IPC stream, a CSV or a Parquet file),
kept as one parquet file.

``upload_create`` reads the request body in bounded chunks through a counting reader capped
at ``TESSERA_UPLOAD_MAX_BYTES``, decodes it batch by batch with pyarrow (a CSV block by
block; a Parquet file, spooled to the incoming directory, row group by row group) and writes
``<UPLOADS_DIR>/<session id>/.incoming-<upload id>/part-00000.parquet``; only a complete
file is renamed to ``<UPLOADS_DIR>/<session id>/<upload id>/`` and gets its ``Upload`` row.
On any failure nothing stays on disk. The files go when the upload or its session is
deleted (``install_hooks``: after the deleting transaction commits, however the session
ended — DELETE, expiry on read, the maintenance sweep, its user's deletion).

A temporary table reads an upload with ``'connector' = 'upload'``: the planner asks
``upload_lookup`` (the session's own uploads only) and the worker checks the path again
at use with ``resolved_upload_path``.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.signals import post_delete

from core import locations
from core.errors import CoreError, NotFound
from core.planner import UploadRef
from jobs.models import Session, Upload
from results.arrow_types import spark_columns
from sessions import quotas, upload_formats
from sessions.upload_formats import CappedReader, Readable

log = logging.getLogger(__name__)

PART_FILE = "part-00000.parquet"
INCOMING_PREFIX = ".incoming-"


def parse_uuid(value: Any) -> uuid.UUID | None:
    """``value`` as a UUID, or None (not ``jobs.selectors``': that imports this module)."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def uploads_root() -> Path:
    return Path(locations.normal_root(str(settings.UPLOADS_DIR)))


def session_dir(session_id: Any) -> Path:
    return uploads_root() / str(uuid.UUID(str(session_id)))


def upload_dir(session_id: Any, upload_id: Any) -> Path:
    return session_dir(session_id) / str(uuid.UUID(str(upload_id)))


def _first_nulls(batch: pa.RecordBatch, offset: int, found: list[int | None]) -> None:
    """Note in ``found`` (by column index) the 1-based row of each column's first NULL."""
    for index, column in enumerate(batch.columns):
        if found[index] is None and column.null_count:
            first = pc.index(column.is_null(), True).as_py()
            found[index] = offset + int(first) + 1


def _not_null_refused(name: str, row: int, why: str) -> CoreError:
    return CoreError(
        f"Column `{name}` {why} but row {row} of the data has NULL there; "
        "fill or drop the NULLs, or declare the column nullable.",
        details={"column": name, "row": row},
    )


def _write(
    schema: pa.Schema, batches: Iterator[pa.RecordBatch], target: Path
) -> tuple[int, list[dict[str, Any]]]:
    """Write ``batches`` (of ``schema``) into ``target`` one by one; (rows, columns). Each
    column records the 1-based row of its first NULL (``first_null_row``, None without one):
    a temporary table that declares it NOT NULL is refused by it (``core.planner.ddl``). A
    field the schema says is not nullable may hold no NULL."""
    columns: list[dict[str, Any]] = list(spark_columns(schema))
    first_nulls: list[int | None] = [None] * len(columns)
    rows = 0
    writer = pq.ParquetWriter(
        str(target),
        schema,
        # Spark's unit; nanoseconds that would be cut off are an error, not silently lost.
        coerce_timestamps="us",
        allow_truncated_timestamps=False,
        compression="snappy",
    )
    try:
        for batch in batches:
            _first_nulls(batch, rows, first_nulls)
            for field, row in zip(schema, first_nulls, strict=True):
                if row is not None and not field.nullable:
                    raise _not_null_refused(field.name, row, "is not nullable in the Arrow schema")
            try:
                writer.write_batch(batch)
            except pa.ArrowInvalid as exc:
                raise CoreError(
                    f"The upload cannot be stored as Spark reads it: {exc}.",
                ) from None
            rows += batch.num_rows
    finally:
        writer.close()
    for column, row in zip(columns, first_nulls, strict=True):
        column["first_null_row"] = row
    return rows, columns


def _capped(session: Session, body: Readable, announced: int | None) -> CappedReader:
    """The body's reader, capped at the server's upload limit or at the room the user's
    upload quota leaves, whichever is less (refused at once when none is left, or when the
    announced length does not fit)."""
    limit = int(settings.TESSERA_UPLOAD_MAX_BYTES)
    room = quotas.upload_room(session.user_id, announced)
    if room is None or room >= limit:
        return CappedReader(body, limit)
    quota = quotas.upload_bytes_limit() or 0

    def over() -> CoreError:
        return quotas.quota_exceeded(quota, quota - room)

    return CappedReader(body, room, over)


def upload_create(
    *,
    session: Session,
    body: Readable,
    announced: int | None = None,
    media_type: str = upload_formats.MEDIA_TYPE,
) -> Upload:
    """Store ``body`` (an Arrow IPC stream, a CSV or a Parquet file: ``media_type``, one of
    ``MEDIA_TYPES``) as an upload of ``session`` (``announced``: the request's
    Content-Length, when it has one). Within the server's upload limit and the user's upload
    quota (``sessions.quotas``): before, while and after it is read."""
    source = upload_formats.SOURCES[media_type]
    reader = _capped(session, body, announced)
    upload_id = uuid.uuid4()
    incoming = session_dir(session.id) / f"{INCOMING_PREFIX}{upload_id}"
    final = upload_dir(session.id, upload_id)
    try:
        incoming.mkdir(parents=True)
        try:
            schema, batches = source(reader, incoming)
            rows, columns = _write(schema, batches, incoming / PART_FILE)
        except CoreError:
            if reader.over_limit:
                raise reader.over() from None
            raise
        except Exception as exc:
            # pyarrow may wrap the reader's own error: the reader knows what happened.
            if reader.over_limit:
                raise reader.over() from None
            if isinstance(exc, pa.ArrowException):
                raise upload_formats.not_arrow(exc) from None
            raise
        if reader.over_limit:
            raise reader.over()
        os.rename(incoming, final)
        try:
            with transaction.atomic():
                # Uploads stored meanwhile count: two at once cannot both take the last bytes.
                quotas.reserve_upload(session.user_id, reader.received)
                return Upload.objects.create(
                    id=upload_id,
                    session_id=session.id,
                    rows=rows,
                    bytes=reader.received,
                    columns=columns,
                )
        except IntegrityError:
            raise NotFound(f"Session {session.id} was closed during the upload.") from None
    except BaseException:
        shutil.rmtree(incoming, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        raise


def upload_list(*, session: Session) -> list[Upload]:
    return list(Upload.objects.filter(session_id=session.id).order_by("created_at", "id"))


def upload_get(*, session: Session, upload_id: Any) -> Upload:
    key = parse_uuid(upload_id)
    found = (
        Upload.objects.filter(pk=key, session_id=session.id).first() if key is not None else None
    )
    if found is None:
        raise NotFound(f"Upload {upload_id} does not exist in this session.")
    return found


def upload_delete(*, upload: Upload) -> None:
    """Delete an upload and (after the commit) its files. A temporary table over it stays
    and fails at use, naming the upload."""
    upload.delete()


# --- use from SQL ---------------------------------------------------------------------------


def upload_lookup(session_id: Any) -> Callable[[str], UploadRef | None]:
    """The planner's view of the session's uploads: an id (any spelling of a UUID) → where
    it lives and its columns; None for ids that are not the session's."""

    def lookup(text: str) -> UploadRef | None:
        key = parse_uuid(text.strip())
        if key is None:
            return None
        found = Upload.objects.filter(pk=key, session_id=session_id).first()
        if found is None:
            return None
        columns = tuple((str(c["name"]), str(c["data_type"])) for c in found.columns)
        first_nulls = {
            str(c["name"]): int(c["first_null_row"])
            for c in found.columns
            if c.get("first_null_row") is not None
        }
        return UploadRef(str(found.id), str(upload_dir(session_id, found.id)), columns, first_nulls)

    return lookup


def is_upload_path(path: str) -> bool:
    """Whether a plan's path lies in the uploads directory (checked by
    ``resolved_upload_path``, never as a storage root)."""
    try:
        local = locations.local_path(path)
    except CoreError:
        return False
    return locations.is_under(local, str(uploads_root()))


def resolved_upload_path(path: str, session_id: Any) -> str:
    """At use, on the worker: ``path`` must be exactly ``<UPLOADS_DIR>/<session>/<upload>``
    for an upload of the job's own session that still exists, with no symbolic link on the
    way; returns it. Anything else is refused before Spark reads."""
    local = locations.local_path(path)
    root = str(uploads_root())
    relative = local[len(root) :].strip("/").split("/") if locations.is_under(local, root) else []
    owner = parse_uuid(relative[0]) if len(relative) == 2 else None
    upload = parse_uuid(relative[1]) if len(relative) == 2 else None
    if owner is None or upload is None or str(owner) != relative[0] or str(upload) != relative[1]:
        raise locations.LocationRefused(
            "The path lies in the uploads directory but names no upload.", details={"path": path}
        )
    if session_id is None or str(owner) != str(session_id):
        raise locations.LocationRefused(
            "The upload belongs to another session; a session reads only its own uploads.",
            details={"path": path},
        )
    if not Upload.objects.filter(pk=upload, session_id=owner).exists():
        raise CoreError(
            f"Upload {upload} no longer exists; it was deleted or its session ended.",
            details={"upload": str(upload)},
        )
    if os.path.realpath(local) != local:
        raise locations.LocationRefused(
            "The upload's directory is reached through a symbolic link.", details={"path": path}
        )
    return local


# --- files go with their rows ---------------------------------------------------------------


def _remove_later(path: Path) -> None:
    transaction.on_commit(lambda: shutil.rmtree(path, ignore_errors=True))


def _upload_deleted(sender: type[Upload], instance: Upload, **kwargs: Any) -> None:
    _remove_later(upload_dir(instance.session_id, instance.id))


def _session_deleted(sender: type[Session], instance: Session, **kwargs: Any) -> None:
    _remove_later(session_dir(instance.id))


def install_hooks() -> None:
    """Delete an upload's (a session's) files once its row's deletion committed; cascades
    (a session's uploads, a user's sessions) send these signals too."""
    post_delete.connect(_upload_deleted, sender=Upload, dispatch_uid="uploads.upload_deleted")
    post_delete.connect(_session_deleted, sender=Session, dispatch_uid="uploads.session_deleted")


def sweep_orphans() -> int:
    """Remove upload directories whose session is gone (a process died between the commit
    and the removal); returns how many. Incoming directories are left to their request."""
    root = uploads_root()
    if not root.is_dir():
        return 0
    names = {entry.name: entry for entry in root.iterdir() if entry.is_dir()}
    keys = {name: parse_uuid(name) for name in names}
    alive = {
        str(pk)
        for pk in Session.objects.filter(
            pk__in=[key for key in keys.values() if key is not None]
        ).values_list("pk", flat=True)
    }
    removed = 0
    for name, entry in names.items():
        if name not in alive:
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed
