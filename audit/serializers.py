"""The REST shape of an audit event (``GET /audit``, an object's recent access)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.models import ACTIONS, AuditEvent


class AuditPrincipalOut(serializers.Serializer[Any]):
    type = serializers.ChoiceField(choices=("user", "team"))
    name = serializers.CharField()


class AuditEventOut(serializers.Serializer[AuditEvent]):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.SerializerMethodField(
        help_text="The username of who acted, as it was then; null: the system."
    )
    action = serializers.ChoiceField(choices=ACTIONS)
    object_kind = serializers.CharField(
        help_text="catalog, database, table, view, function, storage, team, token or engine; "
        "'' for none."
    )
    object = serializers.ListField(
        child=serializers.CharField(), help_text="The object's path as it was named then."
    )
    principal = serializers.SerializerMethodField(
        help_text="Who was granted, revoked, made owner, added or removed; null for none."
    )
    privileges = serializers.ListField(child=serializers.CharField())
    job = serializers.SerializerMethodField(help_text="The job that read or wrote, or null.")
    detail = serializers.DictField()

    def get_actor(self, obj: AuditEvent) -> str | None:
        return obj.actor_name or None

    @extend_schema_field(AuditPrincipalOut(allow_null=True))
    def get_principal(self, obj: AuditEvent) -> dict[str, str] | None:
        if not obj.principal_type:
            return None
        return {"type": obj.principal_type, "name": obj.principal_name}

    def get_job(self, obj: AuditEvent) -> str | None:
        return str(obj.job_id) if obj.job_id is not None else None
