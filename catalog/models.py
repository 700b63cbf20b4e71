"""Persistent catalog objects: catalogs → databases → tables, views and functions.

Names are case-preserving; ``name_key`` (the lower-cased name) carries the
case-insensitive uniqueness and is what lookups and ordering use. Tables and views
share one model (and so one namespace per database, as in Spark); functions have
their own namespace. ``Column`` is a denormalised copy of each table's resolved
columns, kept by the services, so that column search is an indexed query.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from django.conf import settings
from django.db import models

from core import locations


class Named(models.Model):
    name = models.CharField(max_length=255)
    name_key = models.CharField(max_length=255, editable=False)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name

    def save(self, *args: object, **kwargs: object) -> None:
        self.name_key = self.name.lower()
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class Catalog(Named):
    properties = models.JSONField(default=dict, blank=True)
    default_database = models.CharField(max_length=255, default="default")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["name_key"], name="catalog_unique_name"),
        ]
        ordering: ClassVar = ["name_key"]


class Database(Named):
    catalog = models.ForeignKey(Catalog, on_delete=models.CASCADE, related_name="databases")
    properties = models.JSONField(default=dict, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["catalog", "name_key"], name="database_unique_name"),
        ]
        ordering: ClassVar = ["name_key"]

    def __str__(self) -> str:
        return f"{self.catalog.name}.{self.name}"


class Table(Named):
    """A table or a view (``kind``); both live in one namespace per database."""

    KIND_TABLE = "table"
    KIND_VIEW = "view"
    KIND_CHOICES: ClassVar = [(KIND_TABLE, "Table"), (KIND_VIEW, "View")]
    STATUS_ACTIVE = "active"
    STATUS_STAGED = "staged"
    STATUS_CHOICES: ClassVar = [(STATUS_ACTIVE, "Active"), (STATUS_STAGED, "Staged")]

    database = models.ForeignKey(Database, on_delete=models.CASCADE, related_name="tables")
    kind = models.CharField(max_length=8, choices=KIND_CHOICES, default=KIND_TABLE)
    # Tables: options as given ({"format": ...} or {"connector", "path", ...}).
    options = models.JSONField(default=dict, blank=True)
    # The schema as declared (FLIP-164 Schema) and as validated (ResolvedSchema), API JSON form.
    schema = models.JSONField(default=dict, blank=True)
    resolved_schema = models.JSONField(null=True, blank=True)
    partition_by = models.JSONField(default=list, blank=True)
    # Tables: what the last ANALYZE TABLE … COMPUTE STATISTICS found (docs/api.md "Table
    # statistics"); null until then. Set by services.table_store_statistics only.
    column_statistics = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=STATUS_ACTIVE)
    # The CTAS job creating a staged table (FLIP-218); null once active.
    staged_by_job = models.UUIDField(null=True, blank=True)
    # Managed tables: the warehouse directory this table owns ("" for external tables and views).
    location = models.CharField(max_length=4096, blank=True, default="")
    # External tables: their path, normalised, and as its symbolic links resolved when the row
    # was last saved ("" for managed tables, views, and paths too long to compare). Set by
    # save(); indexed because no two tables' paths may overlap (catalog.storage.find_overlap
    # looks up a path's ancestors and descendants: equality and prefix queries).
    data_path = models.CharField(max_length=1024, blank=True, default="", db_index=True)
    data_real_path = models.CharField(max_length=1024, blank=True, default="", db_index=True)
    # Views: the query as written, and expanded to fully qualified names (by the planner).
    query = models.TextField(blank=True, default="")
    expanded_query = models.TextField(null=True, blank=True)  # noqa: DJ001  (None: not expanded yet)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Who holds every privilege on it (ADR 0011): its creator until ownership is transferred.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["database", "name_key"], name="table_unique_name"),
        ]
        indexes: ClassVar = [
            models.Index(fields=["database", "kind", "name_key"], name="table_list_idx"),
            models.Index(fields=["name_key", "id"], name="table_search_order_idx"),
        ]
        ordering: ClassVar = ["name_key"]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.data_path, self.data_real_path = data_paths(self.kind, self.options)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            kwargs["update_fields"] = {*update_fields, "data_path", "data_real_path"}
        super().save(*args, **kwargs)

    @property
    def managed(self) -> bool:
        return self.is_managed(self.kind, self.options)

    @classmethod
    def is_managed(cls, kind: str, options: dict[str, Any]) -> bool:
        """A table whose data lives in the warehouse: its options name no connector/path."""
        return kind == cls.KIND_TABLE and not ("connector" in options or "path" in options)


def data_paths(kind: str, options: Mapping[str, Any]) -> tuple[str, str]:
    """``Table.data_path`` and ``Table.data_real_path`` of a row: an external table's path
    in the form paths are compared in (``core.locations.comparable``: rows stored before
    today's rules are compared too) and that path with its links resolved now."""
    if kind != Table.KIND_TABLE:
        return "", ""
    raw = next((v for k, v in options.items() if str(k).lower() == "path"), None)
    path = locations.comparable(raw) if isinstance(raw, str) else ""
    if not path:
        return "", ""
    real = os.path.realpath(path)
    limit = locations.MAX_PATH_BYTES

    def fits(text: str) -> str:
        return text if len(text.encode("utf-8")) <= limit else ""

    return fits(path), fits(real)


class Column(models.Model):
    """A column of a table or view, copied from its resolved schema for search."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="columns")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    name_key = models.CharField(max_length=255)
    kind = models.CharField(max_length=10)
    data_type = models.TextField(null=True, blank=True)  # noqa: DJ001  (None: not typed yet)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["table", "position"], name="column_unique_position"),
        ]
        indexes: ClassVar = [
            models.Index(fields=["name_key", "id"], name="column_search_order_idx"),
        ]
        ordering: ClassVar = ["table", "position"]

    def __str__(self) -> str:
        return self.name


class ColumnName(models.Model):
    """Every distinct (lower-cased) column name once, for search.

    A common column name stands in many tables; finding the names that match first and
    their columns second keeps a search page cheap however many tables share a name. Names
    are added with columns and never removed (a name without columns matches nothing).
    """

    name_key = models.CharField(max_length=255, unique=True)

    def __str__(self) -> str:
        return self.name_key


class Function(Named):
    LANGUAGE_PYTHON = "python"
    LANGUAGE_SQL = "sql"
    LANGUAGE_CHOICES: ClassVar = [(LANGUAGE_PYTHON, "Python"), (LANGUAGE_SQL, "SQL")]

    database = models.ForeignKey(Database, on_delete=models.CASCADE, related_name="functions")
    language = models.CharField(max_length=8, choices=LANGUAGE_CHOICES)
    # Python: a dotted name ("package.module.function"); SQL: the body expression.
    implementation = models.TextField()
    # SQL functions: [{"name", "data_type"}] and the return type.
    parameters = models.JSONField(default=list, blank=True)
    return_type = models.CharField(max_length=1024, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["database", "name_key"], name="function_unique_name"),
        ]
        indexes: ClassVar = [
            models.Index(fields=["name_key", "id"], name="function_search_order_idx"),
        ]
        ordering: ClassVar = ["name_key"]


class TableVersion(models.Model):
    """One committed state of a managed table (docs/writes.md, "Table versions").

    Every commit to a managed table writes a new warehouse directory and points
    ``Table.location`` at it; the directory it replaced stays, as the previous version, for
    ``TESSERA_VERSION_RETENTION`` after ``replaced_at``. ``expired_at`` is set when the
    maintenance removes a version's directory: the row stays (``DESCRIBE HISTORY`` shows it,
    not readable). The current version is the one with ``replaced_at`` null. Rows are made by
    ``catalog.versions`` only, in the transaction that moves the table's pointer.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    location = models.CharField(max_length=4096)
    operation = models.CharField(max_length=32)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The job that committed it (no foreign key: the catalog does not depend on jobs).
    job_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField()
    rows = models.BigIntegerField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    replaced_at = models.DateTimeField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["table", "version"], name="table_version_unique"),
        ]
        indexes: ClassVar = [
            models.Index(fields=["replaced_at"], name="table_version_replaced_idx"),
        ]
        ordering: ClassVar = ["table", "-version"]

    def __str__(self) -> str:
        return f"{self.table_id}@v{self.version}"

    @property
    def readable(self) -> bool:
        return self.expired_at is None


EVERYONE = "everyone"  # the team every signed-in user is implicitly in


class Grant(models.Model):
    """One privilege given to one principal (a user or a team) on one securable (ADR 0011).

    The securable's ancestry is stored on the row (``catalog``, ``database``, then the object
    itself), so that what a user holds loads in one query and a list filters without joins.
    ``securable_key`` and ``principal_key`` are ``core.privileges``'s keys ("relation:3",
    "user:5" / "team:2"). Rows are written by ``catalog.grants`` only.
    """

    privilege = models.CharField(max_length=16)
    securable_kind = models.CharField(max_length=10)  # catalog|database|table|view|function|storage
    catalog = models.ForeignKey(
        Catalog, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    database = models.ForeignKey(
        Database, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    table = models.ForeignKey(
        Table, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    function = models.ForeignKey(
        Function, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    storage_root = models.CharField(max_length=1024, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="tessera_grants",
    )
    team = models.ForeignKey(
        "auth.Group",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="tessera_grants",
    )
    securable_key = models.CharField(max_length=1100)
    principal_key = models.CharField(max_length=32)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    granted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["securable_key", "principal_key", "privilege"], name="grant_unique"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(user__isnull=False, team__isnull=True)
                    | models.Q(user__isnull=True, team__isnull=False)
                ),
                name="grant_one_principal",
            ),
        ]
        indexes: ClassVar = [
            models.Index(fields=["securable_key"], name="grant_securable_idx"),
        ]
        ordering: ClassVar = ["securable_key", "principal_key", "privilege"]

    def __str__(self) -> str:
        return f"{self.privilege} ON {self.securable_key} TO {self.principal_key}"
