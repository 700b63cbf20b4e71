"""Request and response shapes of /dashboards. Inputs check the JSON shape only; the services
check meaning (and name the field in ``details.field``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.session_properties import WAIT_MAX_SECONDS
from dashboards.models import KINDS, Dashboard, Tile
from webapp.pagination import MAX_PAGE_SIZE
from workbench.serializers import ChartConfig


class ParameterOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    default = serializers.JSONField(allow_null=True)


class DashboardIn(serializers.Serializer[Any]):
    title = serializers.CharField(trim_whitespace=False, allow_blank=True)
    shared = serializers.BooleanField(required=False, default=False)
    refresh_interval_seconds = serializers.JSONField(
        required=False, allow_null=True, default=None, help_text="at least 60 seconds, or null"
    )
    parameters = serializers.JSONField(
        required=False,
        allow_null=True,
        default=None,
        help_text='[{"name": "region", "default": "EU"}, …]',
    )


class DashboardPatch(serializers.Serializer[Any]):
    title = serializers.CharField(trim_whitespace=False, allow_blank=True, required=False)
    shared = serializers.BooleanField(required=False)
    refresh_interval_seconds = serializers.JSONField(required=False, allow_null=True)
    parameters = serializers.JSONField(required=False)


class TileIn(serializers.Serializer[Any]):
    saved_query = serializers.CharField(help_text="The id of a saved query you may read.")
    kind = serializers.ChoiceField(choices=list(KINDS), required=False, default="table")
    chart = serializers.JSONField(
        required=False, allow_null=True, default=None, help_text="null: the saved query's chart"
    )
    x = serializers.JSONField(required=False, help_text="column, 0 … 11 (default 0)")
    y = serializers.JSONField(required=False, help_text="row, 0 … (default 0)")
    w = serializers.JSONField(required=False, help_text="columns wide, 1 … 12 (default 6)")
    h = serializers.JSONField(required=False, help_text="rows high (default 4)")


class TilePatch(serializers.Serializer[Any]):
    saved_query = serializers.CharField(required=False)
    kind = serializers.ChoiceField(choices=list(KINDS), required=False)
    chart = serializers.JSONField(required=False, allow_null=True)
    x = serializers.JSONField(required=False)
    y = serializers.JSONField(required=False)
    w = serializers.JSONField(required=False)
    h = serializers.JSONField(required=False)


class TileOut(serializers.Serializer[Tile]):
    id = serializers.UUIDField()
    saved_query = serializers.UUIDField(source="saved_query_id")
    saved_query_name = serializers.CharField(source="saved_query.name")
    kind = serializers.ChoiceField(choices=list(KINDS))
    chart = ChartConfig(allow_null=True, help_text="the tile's own chart; null: the query's")
    query_chart = ChartConfig(source="saved_query.chart", allow_null=True)
    x = serializers.IntegerField()
    y = serializers.IntegerField()
    w = serializers.IntegerField()
    h = serializers.IntegerField()


class DashboardOut(serializers.Serializer[Dashboard]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    editable = serializers.SerializerMethodField()
    shared = serializers.BooleanField()
    refresh_interval_seconds = serializers.IntegerField(allow_null=True)
    parameters = ParameterOut(many=True)
    tiles = TileOut(many=True, source="tiles.all")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_editable(self, obj: Dashboard) -> bool:
        """Whether the requester (``context["user_id"]``) owns it."""
        return bool(obj.owner_id == self.context.get("user_id"))


class TileRunIn(serializers.Serializer[Any]):
    parameters = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        allow_null=True,
        help_text="Values of the dashboard's parameters (others keep their defaults).",
    )
    session = serializers.CharField(
        required=False, help_text="One of your sessions; left out: a new one is opened."
    )
    wait = serializers.FloatField(required=False, min_value=0, max_value=WAIT_MAX_SECONDS)
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=MAX_PAGE_SIZE)
