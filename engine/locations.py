"""The storage boundary on a worker, checked again every time a job registers or writes
a table's files: the plan may predate today's rules, may not come from the planner at all,
and a symbolic link may have been swapped in since the table was created.

For each path Spark is given: the text passes ``core.locations`` (no globs, escapes,
schemes, ``..``); its symbolic links are resolved now and it must stay under a storage
root (external tables) or in the warehouse (managed tables and write staging), with no
link inside its tree leading out (``catalog.storage``); then Spark's own JVM is asked how
Hadoop reads the resolved path (``org.apache.hadoop.fs.Path(p).toUri()`` and the file
system it names) and must agree (on Spark Connect: the worker's parser JVM). Spark is
handed that resolved path, which narrows the window in which a link could be swapped
between the check and the read. The options pass the format's allow-list
(``core.options``). A write's target must also overlap no other
table's path, and what the job wrote is looked at for links before the commit's
transaction (``checked_written``). Refusals are ``FORBIDDEN_SQL``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pyspark.sql import SparkSession

from catalog import storage
from core import locations
from core import options as table_options
from core.errors import CoreError
from core.planner import RelationPlan
from core.planner.errors import ForbiddenSql
from engine import parser_sessions
from sessions import uploads
from tabledata import staging as write_staging


@dataclass(frozen=True)
class CheckedSource:
    """What Spark may open: a file format, the resolved path and allow-listed options."""

    format: str
    path: str
    options: dict[str, str]


@contextmanager
def refusals(what: str) -> Iterator[None]:
    """The storage boundary's refusals as FORBIDDEN_SQL, prefixed with ``what`` (the table)."""
    try:
        yield
    except (locations.LocationRefused, table_options.OptionRefused) as exc:
        raise ForbiddenSql(f"{what}. {exc.message}", details=exc.details) from None
    except ForbiddenSql:
        raise
    except CoreError as exc:
        exc.message = f"{what}. {exc.message}"
        exc.args = (exc.message,)
        raise


def check_option_keys(options: Mapping[str, str], what: str) -> None:
    """Refuse option keys no format takes (``fs.*``, ``hadoop.*``, ``spark.*``, unknown)."""
    with refusals(what):
        for key in options:
            table_options.check_key(key)


def hadoop_agrees(spark: SparkSession, path: str) -> None:
    """Ask the JVM how Hadoop reads ``path``: a local file system, no authority, exactly this
    path. On Spark Connect the worker's own parser JVM answers (the same Hadoop and Spark
    version as the server's; the server's default file system was checked to be local when
    the worker connected, ``engine.runtimes``)."""
    spark_any: Any = parser_sessions.parser_of(spark)
    jvm = spark_any._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    uri = hadoop_path.toUri()
    scheme, authority, read = uri.getScheme(), uri.getAuthority(), uri.getPath()
    if scheme not in (None, "file") or authority not in (None, "") or read != path:
        raise locations.LocationRefused(
            f"Hadoop reads the path '{path}' as '{uri.toString()}', not as the local path "
            "that was checked.",
            details={"path": path},
        )
    # The session's Hadoop configuration decides what an unqualified path means.
    conf = spark_any._jsparkSession.sessionState().newHadoopConf()
    file_system = hadoop_path.getFileSystem(conf).getUri().getScheme()
    if file_system != "file":
        raise locations.LocationRefused(
            f"Hadoop would read the path '{path}' from the file system '{file_system}', not "
            "from the local storage roots.",
            details={"path": path},
        )


def _resolved(path: str) -> str:
    """``path`` checked and resolved: managed tables live in the warehouse, external ones
    under a storage root."""
    warehouse = locations.normal_root(str(settings.WAREHOUSE_DIR))
    if locations.is_under(locations.local_path(path, allow_percent=True), warehouse):
        return storage.resolved_managed_location(path)
    return storage.resolved_external_path(path)


def reads_upload(relation: RelationPlan) -> bool:
    """Whether a table relation reads an upload (a temporary table with
    ``'connector' = 'upload'``: its path lies in the uploads directory)."""
    return relation.format == "parquet" and uploads.is_upload_path(relation.path)


def checked_read(
    spark: SparkSession, relation: RelationPlan, shown: str, session_id: Any = None
) -> CheckedSource:
    """A plan's table relation (``format``, ``path``, ``options``), checked for reading; a
    path in the uploads directory must be an upload of the job's session ``session_id``."""
    with refusals(f"Table {shown} cannot be read"):
        options = {str(k): str(v) for k, v in relation.options.items()}
        fmt = table_options.check_format(relation.format, formats=table_options.TABLE_FORMATS)
        checked_options = table_options.check_options(fmt, options)
        path = relation.path
        if not path:
            raise CoreError("It has no location to read from.")
        if uploads.is_upload_path(path):
            if fmt != "parquet" or checked_options:
                raise CoreError("An upload is read as parquet, with no options.")
            real = uploads.resolved_upload_path(path, session_id)
        else:
            real = _resolved(path)
        hadoop_agrees(spark, real)
        return CheckedSource(fmt, real, checked_options)


def checked_write(
    spark: SparkSession,
    entry: Mapping[str, Any],
    job_id: str,
    fmt: str,
    options: Mapping[str, str],
    shown: str,
) -> CheckedSource:
    """Where a job writes a target (its staging ``entry``, see ``tabledata.staging``), checked
    now: a new directory in the warehouse, or the table's path's staging directory under a
    storage root; the format must be the table's and the options on its allow-list."""
    with refusals(f"Table {shown} cannot be written"):
        fmt = table_options.check_format(fmt)
        if str(entry.get("format") or "").lower() != fmt:
            raise CoreError(
                f"The plan writes {fmt}, but the table's format is {entry.get('format')}."
            )
        checked_options = table_options.check_options(fmt, dict(options))
        location = str(entry["location"])
        if entry.get("managed"):
            real = storage.resolved_managed_location(location)
        else:
            final = storage.resolved_external_path(str(entry["final"]))
            staging = f"{write_staging.STAGING_PREFIX}{job_id}"
            path = locations.local_path(str(entry["final"]))
            if location != f"{path}/{staging}":
                raise CoreError("The staging location is not this job's own.")
            # Its staging would sit in another table's files: refused before Spark writes.
            storage.check_no_overlap(path, path, exclude=storage.same_table(entry["identifier"]))
            real = f"{final}/{staging}"
            locations.local_path(real)
        hadoop_agrees(spark, real)
        return CheckedSource(fmt, real, checked_options)


def checked_written(target: CheckedSource, entry: Mapping[str, Any], shown: str) -> None:
    """After Spark wrote a target, before the commit's transaction: no symbolic link in
    what the job wrote leads out (Spark writes none; a link found there was put there). The
    commit then lists only what it moves (``tabledata.staging`` and ``tabledata.commit``)."""
    with refusals(f"Table {shown} cannot be written"):
        storage.check_tree(target.path, managed=bool(entry.get("managed")))
