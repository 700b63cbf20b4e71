"""One audit event per row (ADR 0011 §5). Rows are never changed or deleted, except by the
expiry of access events (``audit.services.expire``)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.utils import timezone

# What an event records (``AuditEvent.action``).
GRANT = "grant"
REVOKE = "revoke"
OWNER = "owner"
DROP = "drop"
TEAM_CREATE = "team_create"
TEAM_DELETE = "team_delete"
MEMBER_ADD = "member_add"
MEMBER_REMOVE = "member_remove"
TOKEN_CREATE = "token_create"
TOKEN_REVOKE = "token_revoke"
ENGINE_RESTART = "engine_restart"
ENGINE_STOP = "engine_stop"
CREATE = "create"
ALTER = "alter"
READ = "read"
EXPLAIN = "explain"
WRITE = "write"
DENIED = "denied"
ACTIONS = (
    GRANT,
    REVOKE,
    OWNER,
    DROP,
    TEAM_CREATE,
    TEAM_DELETE,
    MEMBER_ADD,
    MEMBER_REMOVE,
    TOKEN_CREATE,
    TOKEN_REVOKE,
    ENGINE_RESTART,
    ENGINE_STOP,
    CREATE,
    ALTER,
    READ,
    EXPLAIN,
    WRITE,
    DENIED,
)
# Events that expire after ``TESSERA_AUDIT_ACCESS_RETENTION``; the rest stay.
ACCESS_ACTIONS = frozenset({READ, EXPLAIN, WRITE, DENIED})


class AppendOnly(Exception):
    """An audit event was to be changed or deleted."""


class AuditQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnly("audit events are never changed")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit events are never deleted")


class AuditEvent(models.Model):
    at = models.DateTimeField(default=timezone.now)
    # No constraint on actor or job: deleting a user or a job changes no audit row.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        db_constraint=False,
        on_delete=models.DO_NOTHING,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=16)
    object_kind = models.CharField(max_length=10, blank=True, default="")
    object = models.JSONField(default=list, blank=True)  # the path as named then
    # The path lower-cased, parts joined by U+001F: ``object=`` filters on a prefix of it.
    object_key = models.CharField(max_length=1100, blank=True, default="")
    securable_key = models.CharField(max_length=1100, blank=True, default="")
    principal_type = models.CharField(max_length=8, blank=True, default="")
    principal_name = models.CharField(max_length=150, blank=True, default="")
    privileges = models.JSONField(default=list, blank=True)
    job_id = models.UUIDField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["-at", "-id"]
        indexes: ClassVar = [
            models.Index(fields=["securable_key", "-at", "-id"], name="audit_securable_idx"),
            models.Index(fields=["action", "-at"], name="audit_action_idx"),
            models.Index(fields=["actor", "-at"], name="audit_actor_idx"),
            models.Index(fields=["object_key"], name="audit_object_idx"),
            models.Index(fields=["-at", "-id"], name="audit_at_idx"),
            # GET /audit?actor= and ?principal= (migration 0003; ?object= has a PostgreSQL
            # index there too).
            models.Index(fields=["actor_name", "-at", "-id"], name="audit_actor_name_idx"),
            models.Index(
                fields=["principal_type", "principal_name", "-at", "-id"],
                name="audit_principal_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.object}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise AppendOnly("audit events are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit events are never deleted")
