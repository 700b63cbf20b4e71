"""Request and response shapes of the catalog API (docs/api.md §2 "Catalog").

Input serializers check only the JSON shape; meaning is checked by the services.
Names are taken as given (no trimming) so that the services can say what is wrong with them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer, inline_serializer
from rest_framework import serializers

from catalog import permissions
from catalog.models import Catalog, Database, Function, Table


def _name_field() -> serializers.CharField:
    return serializers.CharField(max_length=255, trim_whitespace=False, allow_blank=True)


def _string_map(**kwargs: Any) -> serializers.DictField:
    return serializers.DictField(child=serializers.CharField(allow_blank=True), **kwargs)


class _OwnerMixin(serializers.Serializer[Any]):
    def _username(self, user: Any) -> str | None:
        return user.get_username() if user is not None else None


# --- responses -------------------------------------------------------------------------------

# What the requesting user may do with the object (docs/api.md "Permissions").
CAN = inline_serializer(
    name="Can",
    fields={
        "modify": serializers.BooleanField(help_text="change it (MANAGE)"),
        "drop": serializers.BooleanField(help_text="drop it (MANAGE)"),
        "create": serializers.BooleanField(help_text="create objects inside it (CREATE)"),
        "manage": serializers.BooleanField(help_text="grant and revoke on it (MANAGE)"),
        "select": serializers.BooleanField(help_text="read its rows (SELECT)"),
        "write": serializers.BooleanField(help_text="write rows into it (MODIFY)"),
        "execute": serializers.BooleanField(help_text="call it (EXECUTE)"),
        "transfer_owner": serializers.BooleanField(
            help_text="give it another owner (its owner, a parent's owner, an admin)"
        ),
    },
)


@extend_schema_serializer(component_name="TableProperties")
class TablePropertiesOut(serializers.Serializer[Any]):
    properties = _string_map()


class _CanMixin(serializers.Serializer[Any]):
    """``can``: computed for ``context["user"]`` (everything false without one)."""

    def _user(self) -> Any:
        return self.context.get("user")


class CatalogOut(_CanMixin, serializers.Serializer[Catalog]):
    name = serializers.CharField()
    comment = serializers.CharField()
    owner = serializers.SerializerMethodField()
    properties = _string_map()
    default_database = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    can = serializers.SerializerMethodField()

    def get_owner(self, obj: Catalog) -> str | None:
        return obj.owner.get_username() if obj.owner else None

    @extend_schema_field(CAN)
    def get_can(self, obj: Catalog) -> dict[str, bool]:
        return permissions.catalog_permissions(self._user(), obj)


class DatabaseOut(_CanMixin, serializers.Serializer[Database]):
    catalog = serializers.CharField(source="catalog.name")
    name = serializers.CharField()
    comment = serializers.CharField()
    owner = serializers.SerializerMethodField()
    properties = _string_map()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    can = serializers.SerializerMethodField()

    def get_owner(self, obj: Database) -> str | None:
        return obj.owner.get_username() if obj.owner else None

    @extend_schema_field(CAN)
    def get_can(self, obj: Database) -> dict[str, bool]:
        return permissions.database_permissions(self._user(), obj)


def owner_name(obj: Any) -> str | None:
    """The username of ``obj.owner`` without a query when the row came with its owner, or
    when its owner is its creator (the usual case) and the creator came with it."""
    if obj.owner_id is None:
        return None
    cache = obj._state.fields_cache
    if "owner" not in cache and obj.owner_id == obj.created_by_id and "created_by" in cache:
        creator = cache["created_by"]
        return creator.get_username() if creator is not None else None
    return obj.owner.get_username() if obj.owner else None


class _ObjectOut(_CanMixin, serializers.Serializer[Any]):
    catalog = serializers.CharField(source="database.catalog.name")
    database = serializers.CharField(source="database.name")
    name = serializers.CharField()
    kind = serializers.CharField()
    comment = serializers.CharField()
    created_by = serializers.SerializerMethodField()
    owner = serializers.SerializerMethodField(
        help_text="who holds every privilege on it (its creator until ownership moves)"
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    can = serializers.SerializerMethodField()

    def get_created_by(self, obj: Any) -> str | None:
        return obj.created_by.get_username() if obj.created_by else None

    def get_owner(self, obj: Any) -> str | None:
        return owner_name(obj)

    @extend_schema_field(CAN)
    def get_can(self, obj: Any) -> dict[str, bool]:
        return permissions.object_permissions(self._user(), obj)


class TableOut(_ObjectOut):
    managed = serializers.BooleanField()
    options = _string_map()
    schema = serializers.JSONField()
    resolved_schema = serializers.JSONField()
    partition_by = serializers.ListField(child=serializers.CharField())
    status = serializers.CharField()
    location = serializers.CharField(help_text="The warehouse directory of a managed table.")
    staged_by_job = serializers.UUIDField(
        allow_null=True, help_text="While status is staged: the CTAS job creating the table."
    )


class ViewOut(_ObjectOut):
    query = serializers.CharField()
    expanded_query = serializers.CharField(allow_null=True)
    schema = serializers.JSONField()
    resolved_schema = serializers.JSONField()


class FunctionOut(_ObjectOut):
    kind = serializers.SerializerMethodField()  # type: ignore[assignment]
    language = serializers.CharField()
    implementation = serializers.CharField()
    parameters = serializers.ListField(child=serializers.DictField())
    return_type = serializers.CharField()

    def get_kind(self, obj: Function) -> str:
        return "function"


class SearchHitOut(serializers.Serializer[Any]):
    kind = serializers.CharField()
    catalog = serializers.CharField()
    database = serializers.CharField()
    name = serializers.CharField()
    column = serializers.CharField(required=False)
    data_type = serializers.CharField(required=False, allow_null=True)
    object_kind = serializers.CharField(required=False)
    comment = serializers.CharField(required=False)

    # A column hit names its column, type and object kind; any other hit has its comment.
    _COLUMN_ONLY = ("column", "data_type", "object_kind")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        for name in ("comment",) if instance.kind == "column" else self._COLUMN_ONLY:
            data.pop(name, None)
        return data


def table_out(table: Table, user: Any = None) -> dict[str, Any]:
    """A table or view as its serializer gives it; ``can`` for ``user``."""
    serializer = ViewOut if table.kind == Table.KIND_VIEW else TableOut
    return dict(serializer(table, context={"user": user}).data)


# --- requests --------------------------------------------------------------------------------


class CatalogIn(serializers.Serializer[Any]):
    name = _name_field()
    comment = serializers.CharField(allow_blank=True, required=False, default="")
    properties = serializers.DictField(required=False, default=dict)
    default_database = serializers.CharField(
        max_length=255,
        trim_whitespace=False,
        allow_blank=True,
        required=False,
        default="default",
    )


class CatalogPatch(serializers.Serializer[Any]):
    comment = serializers.CharField(allow_blank=True, required=False)
    properties = serializers.DictField(required=False)
    default_database = serializers.CharField(max_length=255, required=False)
    owner = serializers.CharField(
        max_length=150,
        required=False,
        help_text="a username: hand the object to that user (its owner, a parent's owner or "
        "an admin may)",
    )


class DatabaseIn(serializers.Serializer[Any]):
    name = _name_field()
    comment = serializers.CharField(allow_blank=True, required=False, default="")
    properties = serializers.DictField(required=False, default=dict)


class DatabasePatch(serializers.Serializer[Any]):
    comment = serializers.CharField(allow_blank=True, required=False)
    properties = serializers.DictField(required=False)
    owner = serializers.CharField(
        max_length=150,
        required=False,
        help_text="a username: hand the object to that user (its owner, a parent's owner or "
        "an admin may)",
    )


class TableIn(serializers.Serializer[Any]):
    name = _name_field()
    comment = serializers.CharField(allow_blank=True, required=False, default="")
    schema = serializers.JSONField(required=False, help_text="FLIP-164 schema, API.md form.")
    options = serializers.DictField(required=False, default=dict)
    partition_by = serializers.ListField(
        child=serializers.CharField(), required=False, default=list
    )
    properties = serializers.DictField(
        required=False,
        help_text="Alternative to schema/options/partition_by: the catalog-properties encoding.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "properties" in attrs:
            if "schema" in attrs or attrs.get("options") or attrs.get("partition_by"):
                raise serializers.ValidationError(
                    "Give either 'properties' or 'schema' (with 'options', 'partition_by'), "
                    "not both."
                )
        elif "schema" not in attrs:
            raise serializers.ValidationError({"schema": ["A table needs a schema."]})
        return attrs


class TablePatch(serializers.Serializer[Any]):
    comment = serializers.CharField(allow_blank=True, required=False)
    schema = serializers.JSONField(required=False)
    options = serializers.DictField(required=False)
    partition_by = serializers.ListField(child=serializers.CharField(), required=False)
    owner = serializers.CharField(
        max_length=150,
        required=False,
        help_text="a username: hand the object to that user (its owner, a parent's owner or "
        "an admin may)",
    )


class ViewIn(serializers.Serializer[Any]):
    name = _name_field()
    query = serializers.CharField(allow_blank=True, trim_whitespace=False)
    schema = serializers.JSONField(required=False)
    comment = serializers.CharField(allow_blank=True, required=False, default="")


class ViewPatch(serializers.Serializer[Any]):
    query = serializers.CharField(allow_blank=True, trim_whitespace=False, required=False)
    schema = serializers.JSONField(required=False)
    comment = serializers.CharField(allow_blank=True, required=False)
    owner = serializers.CharField(
        max_length=150,
        required=False,
        help_text="a username: hand the object to that user (its owner, a parent's owner or "
        "an admin may)",
    )


class FunctionIn(serializers.Serializer[Any]):
    name = _name_field()
    language = serializers.CharField()
    implementation = serializers.CharField(allow_blank=True, trim_whitespace=False)
    parameters = serializers.ListField(child=serializers.JSONField(), required=False, default=list)
    return_type = serializers.CharField(allow_blank=True, required=False, default="")
    comment = serializers.CharField(allow_blank=True, required=False, default="")


class FunctionPatch(serializers.Serializer[Any]):
    implementation = serializers.CharField(allow_blank=True, trim_whitespace=False, required=False)
    parameters = serializers.ListField(child=serializers.JSONField(), required=False)
    return_type = serializers.CharField(allow_blank=True, required=False)
    comment = serializers.CharField(allow_blank=True, required=False)
    owner = serializers.CharField(
        max_length=150,
        required=False,
        help_text="a username: hand the object to that user (its owner, a parent's owner or "
        "an admin may)",
    )


class TableVersionOut(serializers.Serializer[Any]):
    """One version of a managed table (docs/api.md, "Table versions")."""

    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    user = serializers.SerializerMethodField()
    job_id = serializers.SerializerMethodField()
    operation = serializers.CharField()
    rows = serializers.IntegerField(
        allow_null=True, help_text="null without SELECT on the table (or when not recorded)"
    )
    metrics = serializers.JSONField(allow_null=True, help_text="null without SELECT on the table")
    replaced_at = serializers.DateTimeField(allow_null=True)
    expired_at = serializers.DateTimeField(allow_null=True)
    readable = serializers.BooleanField()
    current = serializers.SerializerMethodField()

    def get_user(self, row: Any) -> str | None:
        return row.user.username if row.user is not None else None

    def get_current(self, row: Any) -> bool:
        return row.replaced_at is None

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if not self.context.get("figures"):  # computed from the data: SELECT only
            data["rows"] = data["metrics"] = None
        return data

    def get_job_id(self, row: Any) -> str | None:
        """The committing job's id, for its own user only (jobs are private)."""
        viewer = self.context.get("user")
        mine = viewer is not None and row.user_id is not None and row.user_id == viewer.pk
        return str(row.job_id) if mine and row.job_id is not None else None


class SchemaChangeItemOut(serializers.Serializer[Any]):
    """One change of a schema event (core.schema_diff)."""

    change = serializers.CharField(
        help_text="added, dropped, type, comment, moved, primary_key or watermarks"
    )
    column = serializers.CharField(allow_null=True, help_text="null for the table-wide changes")
    before = serializers.JSONField(
        allow_null=True, help_text="the definition, comment, order, key or watermarks before"
    )
    after = serializers.JSONField(allow_null=True, help_text="the same, after")


class SchemaChangeOut(serializers.Serializer[Any]):
    """A table's creation or schema change (docs/api.md, "Schema changes")."""

    id = serializers.IntegerField(source="event.pk")
    at = serializers.DateTimeField(source="event.at")
    actor = serializers.SerializerMethodField(
        help_text="The username of who made the change, as it was then; null: the system."
    )
    action = serializers.CharField(source="event.action", help_text="create or alter")
    changes = SchemaChangeItemOut(many=True)

    def get_actor(self, row: Any) -> str | None:
        return row.event.actor_name or None
