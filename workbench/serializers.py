"""Request and response shapes of /saved-queries. Inputs check only the JSON shape; the
services check meaning (and name the field in ``details.field``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from workbench.models import EditorTab, SavedQuery


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


# --- editor tabs -----------------------------------------------------------------------------


class EditorTabIn(serializers.Serializer[Any]):
    id = serializers.UUIDField(required=False, help_text="a UUID the client chose (optional)")
    title = serializers.CharField(trim_whitespace=False, allow_blank=True)
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    position = serializers.IntegerField(required=False)
    saved_query_id = serializers.UUIDField(required=False, allow_null=True)
    catalog = serializers.CharField(trim_whitespace=False, required=False, allow_null=True)
    database = serializers.CharField(trim_whitespace=False, required=False, allow_null=True)
    active = serializers.BooleanField(required=False, default=False)


class EditorTabPatch(serializers.Serializer[Any]):
    version = serializers.IntegerField(help_text="the version the change was made on")
    title = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    sql = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    position = serializers.IntegerField(required=False)
    saved_query_id = serializers.UUIDField(required=False, allow_null=True)
    catalog = serializers.CharField(trim_whitespace=False, required=False, allow_null=True)
    database = serializers.CharField(trim_whitespace=False, required=False, allow_null=True)


class EditorTabActiveIn(serializers.Serializer[Any]):
    id = serializers.UUIDField()


class EditorTabOut(serializers.Serializer[EditorTab]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    sql = serializers.CharField()
    position = serializers.IntegerField()
    active = serializers.BooleanField()
    saved_query_id = serializers.UUIDField(allow_null=True)
    catalog = serializers.CharField(allow_null=True)
    database = serializers.CharField(allow_null=True)
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class EditorTabLimitsOut(serializers.Serializer[Any]):
    max_tabs = serializers.IntegerField(help_text="0: no limit")
    max_chars = serializers.IntegerField()


class EditorTabListOut(serializers.Serializer[Any]):
    items = EditorTabOut(many=True)
    active = serializers.UUIDField(allow_null=True)
    limits = EditorTabLimitsOut()
