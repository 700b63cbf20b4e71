"""Django admin over the same objects. Schemas and options are changed through the API or
SQL (they need the resolver); here they are shown read-only, and creation goes through
the services so the admin cannot make what the API would refuse."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from catalog import services
from catalog.models import Catalog, Database, Function, Grant, Table


@admin.register(Catalog)
class CatalogAdmin(admin.ModelAdmin[Catalog]):
    list_display = ("name", "default_database", "owner", "created_at")
    search_fields = ("name_key", "comment")
    readonly_fields = ("created_at", "updated_at")
    fields = (
        "name",
        "comment",
        "properties",
        "default_database",
        "owner",
        "created_at",
        "updated_at",
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Catalog | None = None) -> Any:
        # Ownership moves through PATCH or ALTER … OWNER TO, which audit it.
        return (*self.readonly_fields, "name", "owner") if obj else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Catalog, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created = services.catalog_create(
            user=request.user,
            name=obj.name,
            comment=obj.comment,
            properties=obj.properties,
            default_database=obj.default_database,
        )
        obj.pk = created.pk

    # Drops go through the service: the audit trail and the managed tables' directories.
    def delete_model(self, request: HttpRequest, obj: Catalog) -> None:
        services.catalog_delete(user=request.user, catalog=obj, cascade=True)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for catalog in queryset:
            services.catalog_delete(user=request.user, catalog=catalog, cascade=True)


@admin.register(Database)
class DatabaseAdmin(admin.ModelAdmin[Database]):
    list_display = ("name", "catalog", "owner", "created_at")
    list_filter = ("catalog",)
    search_fields = ("name_key", "comment")
    list_select_related = ("catalog", "owner")
    readonly_fields = ("created_at", "updated_at")

    def get_readonly_fields(self, request: HttpRequest, obj: Database | None = None) -> Any:
        if obj is None:
            return self.readonly_fields
        return (*self.readonly_fields, "name", "catalog", "owner")

    def save_model(self, request: HttpRequest, obj: Database, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created = services.database_create(
            user=request.user,
            catalog=obj.catalog,
            name=obj.name,
            comment=obj.comment,
            properties=obj.properties,
        )
        obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj: Database) -> None:
        services.database_delete(user=request.user, database=obj, cascade=True)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for database in queryset.select_related("catalog"):
            services.database_delete(user=request.user, database=database, cascade=True)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin[Table]):
    list_display = ("name", "kind", "database", "status", "owner", "updated_at")
    list_filter = ("kind", "status")
    search_fields = ("name_key", "comment")
    list_select_related = ("database__catalog", "owner")
    fields = (
        "name",
        "kind",
        "database",
        "comment",
        "status",
        "options",
        "schema",
        "resolved_schema",
        "partition_by",
        "location",
        "query",
        "expanded_query",
        "created_by",
        "owner",
        "created_at",
        "updated_at",
    )
    readonly_fields = tuple(f for f in fields if f != "comment")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tables need schema resolution: create them with the API or SQL

    def delete_model(self, request: HttpRequest, obj: Table) -> None:
        services.table_delete(user=request.user, table=obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for table in queryset:
            services.table_delete(user=request.user, table=table)


@admin.register(Function)
class FunctionAdmin(admin.ModelAdmin[Function]):
    list_display = ("name", "language", "database", "owner", "updated_at")
    list_filter = ("language",)
    search_fields = ("name_key", "comment")
    list_select_related = ("database__catalog", "owner")
    fields = (
        "name",
        "database",
        "language",
        "implementation",
        "parameters",
        "return_type",
        "comment",
        "created_by",
        "owner",
        "created_at",
        "updated_at",
    )
    readonly_fields = tuple(f for f in fields if f != "comment")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Function) -> None:
        services.function_delete(user=request.user, function=obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for function in queryset:
            services.function_delete(user=request.user, function=function)


@admin.register(Grant)
class GrantAdmin(admin.ModelAdmin[Grant]):
    """Grants, read-only: they change through GRANT/REVOKE or the permissions API, which
    check the right to and write the audit trail (catalog.grants)."""

    list_display = ("privilege", "securable_kind", "securable_key", "principal_key", "granted_at")
    list_filter = ("securable_kind", "privilege")
    search_fields = ("securable_key", "principal_key")
    list_select_related = ("user", "team", "granted_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Grant | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Grant | None = None) -> bool:
        return False
