"""Request and response shapes of /saved-queries. Inputs check only the JSON shape; the
services check meaning (and name the field in ``details.field``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from workbench.models import SavedQuery


class ChartConfig(serializers.Serializer[Any]):
    """How a saved query's result is charted (checked by the service)."""

    type = serializers.ChoiceField(choices=["bar", "line", "area", "scatter", "pie"])
    x = serializers.CharField()
    y = serializers.ListField(child=serializers.CharField())
    aggregation = serializers.ChoiceField(choices=["none", "sum", "avg", "count", "min", "max"])


class SavedQueryIn(serializers.Serializer[Any]):
    name = serializers.CharField(trim_whitespace=False, allow_blank=True)
    description = serializers.CharField(
        trim_whitespace=False, allow_blank=True, required=False, default=""
    )
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True)
    shared = serializers.BooleanField(required=False, default=False)
    chart = serializers.JSONField(required=False, allow_null=True, default=None)


class SavedQueryPatch(serializers.Serializer[Any]):
    name = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    description = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    shared = serializers.BooleanField(required=False)
    chart = serializers.JSONField(required=False, allow_null=True)


class SavedQueryOut(serializers.Serializer[SavedQuery]):
    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField()
    sql = serializers.CharField()
    shared = serializers.BooleanField()
    chart = ChartConfig(allow_null=True)
    owner = serializers.SerializerMethodField()
    editable = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_owner(self, obj: SavedQuery) -> str:
        return obj.owner.get_username()

    def get_editable(self, obj: SavedQuery) -> bool:
        """Whether the requester (``context["user_id"]``) owns it."""
        return bool(obj.owner_id == self.context.get("user_id"))
