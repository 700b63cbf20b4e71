"""Catalog routes under /api/v1/. Names are single percent-encoded identifier parts."""

from __future__ import annotations

from django.urls import URLPattern, re_path
from rest_framework.views import APIView

from catalog import permission_views as pv
from catalog import views

NAME = r"[^/]+"
C = rf"catalogs/(?P<catalog>{NAME})"
D = rf"{C}/databases/(?P<database>{NAME})"


def route(pattern: str, view: type[APIView], name: str) -> URLPattern:
    # An optional trailing slash: /catalogs and /catalogs/ are the same resource.
    return re_path(rf"^{pattern}/?$", view.as_view(), name=name)


urlpatterns = [
    route("catalogs", views.CatalogListView, "catalog-list"),
    route(C, views.CatalogDetailView, "catalog-detail"),
    route(f"{C}/databases", views.DatabaseListView, "database-list"),
    route(D, views.DatabaseDetailView, "database-detail"),
    route(f"{D}/tables", views.TableListView, "table-list"),
    route(rf"{D}/tables/(?P<name>{NAME})", views.TableDetailView, "table-detail"),
    route(rf"{D}/tables/(?P<name>{NAME})/properties", views.TablePropertiesView, "table-props"),
    route(rf"{D}/tables/(?P<name>{NAME})/versions", views.TableVersionListView, "table-versions"),
    route(
        rf"{D}/tables/(?P<name>{NAME})/schema-changes",
        views.TableSchemaChangeListView,
        "table-schema-changes",
    ),
    route(f"{D}/views", views.ViewListView, "view-list"),
    route(rf"{D}/views/(?P<name>{NAME})", views.ViewDetailView, "view-detail"),
    route(f"{D}/functions", views.FunctionListView, "function-list"),
    route(rf"{D}/functions/(?P<name>{NAME})", views.FunctionDetailView, "function-detail"),
    route("search", views.SearchView, "search"),
    # Permissions (ADR 0011): who holds what on an object, and its recent access.
    route(rf"{C}/permissions", pv.CatalogPermissionsView, "catalog-permissions"),
    route(rf"{C}/access", pv.CatalogAccessView, "catalog-access"),
    route(rf"{D}/permissions", pv.DatabasePermissionsView, "database-permissions"),
    route(rf"{D}/access", pv.DatabaseAccessView, "database-access"),
    route(rf"{D}/tables/(?P<name>{NAME})/permissions", pv.TablePermissionsView, "table-perms"),
    route(rf"{D}/tables/(?P<name>{NAME})/access", pv.TableAccessView, "table-access"),
    route(rf"{D}/views/(?P<name>{NAME})/permissions", pv.ViewPermissionsView, "view-perms"),
    route(rf"{D}/views/(?P<name>{NAME})/access", pv.ViewAccessView, "view-access"),
    route(
        rf"{D}/functions/(?P<name>{NAME})/permissions",
        pv.FunctionPermissionsView,
        "function-perms",
    ),
    route(rf"{D}/functions/(?P<name>{NAME})/access", pv.FunctionAccessView, "function-access"),
    route("storage-roots", pv.StorageRootListView, "storage-roots"),
    route("storage-roots/permissions", pv.StorageRootPermissionsView, "storage-root-perms"),
]
