"""Sessions, jobs and their events; workers' heartbeats.

The job row is the single source of truth for a statement's life: status, progress, error,
result metadata. Celery only carries job ids.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import ClassVar

from django.conf import settings
from django.db import models

from core import jobstate
from core.planner.plan import Plan


class Worker(models.Model):
    """One start of one worker process, and its heartbeat (``jobs.worker``).

    ``hostname`` is the process's identity, unique per start (``<node>/<pid>/<start id>``,
    e.g. ``worker1@host/4242/9f3c1a7e``), and what ``Job.worker`` records for the jobs it
    claims: a restarted worker with the same Celery node name is a new row, so it never
    vouches for the jobs of the process before it.
    """

    hostname = models.CharField(max_length=255, unique=True)
    # The Celery node name (``worker1@host``): the same across restarts.
    node = models.CharField(max_length=255, blank=True, default="")
    pid = models.IntegerField()
    # Boot, PID namespace, pid and start time: lets a process on the same machine tell
    # that this one has ended without waiting for its heartbeat to go stale.
    process = models.CharField(max_length=255, blank=True, default="")
    started_at = models.DateTimeField()
    last_heartbeat = models.DateTimeField(db_index=True)
    # Set when the process is known to have ended (clean shutdown, or found gone).
    stopped_at = models.DateTimeField(null=True, blank=True)
    # How many streaming jobs it runs at once at most (``jobs.worker.stream_slots``).
    stream_slots = models.PositiveIntegerField(default=0)
    # Its Celery concurrency (threads), 0 if not known: the pool's size for the slot a
    # claim keeps free for users with nothing running (``jobs.scheduling``).
    concurrency = models.PositiveIntegerField(default=0)

    class Meta:
        ordering: ClassVar = ["hostname"]

    def __str__(self) -> str:
        return self.hostname


class Engine(models.Model):
    """One engine: a Spark application (its own driver JVM, in its own process on a worker
    host) that runs the jobs of one share key (``jobs.engines``; docs/api.md §6). A spare
    is started before anybody needs it and has no key until it is assigned."""

    STARTING, READY, STOPPING, STOPPED, LOST = "STARTING", "READY", "STOPPING", "STOPPED", "LOST"
    STATE_CHOICES: ClassVar = [(s, s) for s in (STARTING, READY, STOPPING, STOPPED, LOST)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    share_level = models.CharField(max_length=8)
    # ``user:<id>``, ``team:<group>`` or ``server``; "" for a spare not assigned yet.
    share_key = models.CharField(max_length=255, blank=True, default="", db_index=True)
    runtime = models.CharField(max_length=16)
    state = models.CharField(max_length=10, choices=STATE_CHOICES, default=STARTING)
    # The worker process (``Worker.hostname``) that started it, and the engine's own pid.
    worker = models.CharField(max_length=255, blank=True, default="")
    pid = models.IntegerField(null=True, blank=True)
    driver_memory = models.CharField(max_length=16, blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    ready_at = models.DateTimeField(null=True, blank=True)
    assigned_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    # Why it stopped: idle, evicted, restart, stop, lost, shutdown, failed_start.
    stop_reason = models.CharField(max_length=32, blank=True, default="")
    stop_message = models.TextField(blank=True, default="")
    # Asked by a user (restart) or an admin (stop); the worker that runs it acts on it.
    stop_requested = models.CharField(max_length=16, blank=True, default="")
    stop_requested_by = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        ordering: ClassVar = ["-started_at"]
        indexes: ClassVar = [models.Index(fields=["state", "share_key"], name="engine_state_idx")]

    def __str__(self) -> str:
        return f"{self.id} {self.share_key or 'spare'} {self.state}"


class Session(models.Model):
    """A user's SQL session: current catalog/database, properties and temporary objects."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sql_sessions"
    )
    current_catalog = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    current_database = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    properties = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(db_index=True)
    idle_timeout_seconds = models.PositiveIntegerField()

    class Meta:
        ordering: ClassVar = ["-created_at"]

    def __str__(self) -> str:
        return str(self.id)

    @property
    def expires_at(self) -> datetime:
        """When the session expires unless it is used again."""
        return self.last_used_at + timedelta(seconds=self.idle_timeout_seconds)


class Workspace(models.Model):
    """Where a user's new SQL sessions start: the catalog and database they last moved a
    session to, and the default they chose (used when the last one is gone or unset)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="sql_workspace",
    )
    default_catalog = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    default_database = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    last_catalog = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    last_database = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"workspace of user {self.pk}"


ORIGIN_USER, ORIGIN_SCHEDULE = "user", "schedule"


class Job(models.Model):
    STATUS_CHOICES: ClassVar = [(s, s) for s in jobstate.STATUSES]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    sql = models.TextField()
    kind = models.CharField(max_length=16)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=jobstate.CREATED)
    target = models.JSONField(null=True, blank=True)
    plan = models.JSONField(default=dict)
    progress = models.JSONField(default=dict, blank=True)
    error = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    # Which worker runs it and when it last said so; the reaper fails jobs of dead workers.
    worker = models.CharField(max_length=255, blank=True, default="")
    # The engine it ran on (None: in the worker's own Spark, share level ``server``).
    engine = models.ForeignKey(
        Engine, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    timeout_seconds = models.PositiveIntegerField(default=3600)
    cancel_requested = models.BooleanField(default=False)
    # Writes (CTAS, INSERT, statement sets): where this job staged its data, per target.
    staging = models.JSONField(default=dict, blank=True)
    # What the planner checked for the statement (ADR 0011): ``AccessPlan.to_dict()`` per
    # privilege — the reads and writes of the audit log and of the re-checks of commits and
    # stream batches (``catalog.access.recheck_reads``). Not part of the plan JSON.
    access = models.JSONField(default=list, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    enqueue_count = models.PositiveIntegerField(default=0)
    # A claim passed this job over to keep the pool's last free slot for another user, and
    # its message was spent: the next freed slot sends it one (``scheduling.hand_on``).
    held = models.BooleanField(default=False)
    # Jobs of one script run in order: the next one starts when this one finishes.
    script_id = models.UUIDField(null=True, blank=True, db_index=True)
    script_index = models.PositiveIntegerField(default=0)
    # Where this statement starts in the script's text (code points), so a client can point
    # at it without splitting the script again.
    script_offset = models.PositiveIntegerField(default=0)
    # A statement a pipeline job ran (docs/pipelines.md): run inline by the pipeline's
    # worker, in its SparkSession; never claimed by another worker (jobs.scheduling).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    # Who submitted it: a user's statement (REST, HiveServer2, Flight SQL, the client) or a
    # scheduled run (``schedules.scheduler``, as the schedule's owner).
    origin = models.CharField(max_length=16, default=ORIGIN_USER)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-created_at"]
        indexes: ClassVar = [
            models.Index(fields=["user", "-created_at"], name="job_user_recent_idx"),
            models.Index(fields=["status", "created_at"], name="job_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.status}"

    @property
    def typed_plan(self) -> Plan | None:
        """The stored plan JSON read as the planner's ``Plan`` (None: no plan, e.g. a job the
        planner refused, or a script's statement whose turn has not come). The one place
        ``jobs`` reads ``Job.plan``."""
        return Plan.from_dict(self.plan) if self.plan else None


class JobEvent(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(auto_now_add=True)
    type = models.CharField(max_length=64)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering: ClassVar = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.type} at {self.at}"


class TemporaryObject(models.Model):
    """A session's temporary table, view or function (FLIP-64).

    Stored in the database, not in a worker's memory, so that any worker can run the
    session's statements; deleted with the session (CASCADE). A temporary table's data is
    never Tessera's: deleting the row leaves its files alone.

    Identifiers are three parts, case-preserving, with lower-cased keys for matching. Tables
    and views share one namespace per identifier, catalog functions another; temporary
    *system* functions (``system``) have a one-part name and empty catalog/database.
    ``definition`` holds what the kind needs: tables ``options``, ``schema``,
    ``resolved_schema``, ``partition_by``, ``comment``; views ``query``, ``expanded_query``,
    ``schema``, ``resolved_schema``, ``comment``; functions ``language``, ``implementation``,
    ``parameters``, ``return_type``, ``comment``.
    """

    KIND_TABLE = "table"
    KIND_VIEW = "view"
    KIND_FUNCTION = "function"
    KIND_CHOICES: ClassVar = [
        (KIND_TABLE, "Table"),
        (KIND_VIEW, "View"),
        (KIND_FUNCTION, "Function"),
    ]
    RELATION_KINDS: ClassVar = (KIND_TABLE, KIND_VIEW)

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="temporary_objects")
    kind = models.CharField(max_length=8, choices=KIND_CHOICES)
    system = models.BooleanField(default=False)
    catalog = models.CharField(max_length=255, blank=True, default="")
    database = models.CharField(max_length=255, blank=True, default="")
    name = models.CharField(max_length=255)
    catalog_key = models.CharField(max_length=255, blank=True, default="", editable=False)
    database_key = models.CharField(max_length=255, blank=True, default="", editable=False)
    name_key = models.CharField(max_length=255, editable=False)
    definition = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_job = models.ForeignKey(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["session", "catalog_key", "database_key", "name_key"],
                condition=models.Q(kind__in=["table", "view"]),
                name="temporary_relation_unique",
            ),
            models.UniqueConstraint(
                fields=["session", "catalog_key", "database_key", "name_key"],
                condition=models.Q(kind="function", system=False),
                name="temporary_function_unique",
            ),
            models.UniqueConstraint(
                fields=["session", "name_key"],
                condition=models.Q(kind="function", system=True),
                name="temporary_system_function_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(system=False)
                | models.Q(kind="function", catalog="", database=""),
                name="temporary_system_only_functions",
            ),
        ]
        ordering: ClassVar = ["catalog_key", "database_key", "name_key"]

    def __str__(self) -> str:
        return ".".join(part for part in (self.catalog, self.database, self.name) if part)

    def save(self, *args: object, **kwargs: object) -> None:
        self.catalog_key = self.catalog.lower()
        self.database_key = self.database.lower()
        self.name_key = self.name.lower()
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def parts(self) -> tuple[str, ...]:
        """The identifier: three parts, or one for a temporary system function."""
        return (self.name,) if self.system else (self.catalog, self.database, self.name)


class SchemaCheck(models.Model):
    """A question for Spark's analyzer that a web request waits for (``sessions.analysis``):
    type a table's expressions, or derive a view's schema, before the catalog stores it.

    The web process writes the ``request`` and sends ``tessera.check_schema`` with the id;
    a worker writes the ``answer`` (``{"resolved": …}``, ``{"schema": …}`` or ``{"error":
    {"code", "message", "details"}}``) and announces it. The web deletes the row when it has
    the answer or gives up; a worker that finds no row (too late) does nothing."""

    KIND_TABLE = "table"
    KIND_VIEW = "view"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=16)
    request = models.JSONField()
    answer = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.kind} check {self.id}"


class Upload(models.Model):
    """Data a session's user sent as Arrow IPC (``sessions.uploads``), stored as parquet in
    ``<UPLOADS_DIR>/<session id>/<upload id>/``; read through a temporary table with
    ``'connector' = 'upload'``. Deleted with its session (CASCADE), its files with it
    (``sessions.uploads.install_hooks``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="uploads")
    rows = models.BigIntegerField()
    bytes = models.BigIntegerField()  # the Arrow IPC bytes received
    columns = models.JSONField(default=list)  # [{"name", "data_type"}], Spark SQL types
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]

    def __str__(self) -> str:
        return str(self.id)
