"""REST permissions of catalog objects and storage roots (ADR 0011 §4.2; docs/api.md
"Permissions"). Thin: find the securable as the user may see it, call ``catalog.grants``.

- ``GET|PATCH …/{object}/permissions``: who holds what on it (direct and inherited), what the
  caller holds, and the changes of an owner or a ``MANAGE`` holder.
- ``GET …/{object}/access``: the object's audit events (grants, revokes, ownership, reads and
  writes by jobs), newest first, for ``MANAGE`` holders.
- ``GET /storage-roots`` and ``GET|PATCH /storage-roots/permissions?path=``: ``READ FILES``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import selectors as audit_selectors
from audit import views as audit_views
from audit.serializers import AuditEventOut
from catalog import access, grants, storage
from core.errors import CoreError, NotFound
from core.identifiers import quote_path
from core.privileges import Kind, Privilege, Securable, effective
from webapp.api import PAGE_PARAMS, page_of
from webapp.pagination import page_body, page_request, whole_page

# --- shapes (OpenAPI) -----------------------------------------------------------------------

_OBJECT = inline_serializer(
    name="PermissionObject",
    fields={
        "kind": serializers.CharField(
            help_text="catalog | database | table | view | function | storage"
        ),
        "identifier": serializers.ListField(
            child=serializers.CharField(), required=False, help_text="its path (not storage)"
        ),
        "path": serializers.CharField(required=False, help_text="storage roots: the root"),
    },
)


class PrivilegeAssignmentOut(serializers.Serializer[Any]):
    principal = serializers.CharField()
    principal_type = serializers.ChoiceField(choices=["user", "team"])
    privileges = serializers.ListField(child=serializers.CharField())
    inherited_from = inline_serializer(
        name="PermissionSource",
        fields={
            "kind": serializers.CharField(),
            "identifier": serializers.ListField(child=serializers.CharField()),
        },
        allow_null=True,
        help_text="null: granted on the object itself; else the catalog or database it comes from",
    )


class PermissionsOut(serializers.Serializer[Any]):
    object = _OBJECT
    owner = serializers.CharField(allow_null=True)
    privilege_assignments = PrivilegeAssignmentOut(many=True)
    effective = serializers.ListField(
        child=serializers.CharField(), help_text="what the caller holds on it"
    )
    can = inline_serializer(
        name="PermissionsCan",
        fields={
            key: serializers.BooleanField()
            for key in (
                "modify",
                "drop",
                "create",
                "manage",
                "select",
                "write",
                "execute",
                "transfer_owner",
            )
        },
    )


class PermissionChangeIn(serializers.Serializer[Any]):
    principal = serializers.CharField(help_text="a username or a team name")
    principal_type = serializers.ChoiceField(choices=["user", "team"], default="user")
    add = serializers.ListField(child=serializers.CharField(), required=False)
    remove = serializers.ListField(child=serializers.CharField(), required=False)


class PermissionsPatchIn(serializers.Serializer[Any]):
    changes = PermissionChangeIn(many=True, help_text=f"at most {grants.MAX_CHANGES}")


class StorageRootOut(serializers.Serializer[Any]):
    path = serializers.CharField()
    read_files = serializers.BooleanField(help_text="whether the caller may read files under it")
    privilege_assignments = PrivilegeAssignmentOut(
        many=True, required=False, help_text="admins only"
    )


def _page_of(serializer: type[serializers.Serializer[Any]], name: str) -> Any:
    return page_of(name, serializer(many=True))


PRINCIPAL_PARAMS = [
    OpenApiParameter("principal", str, description="only this principal's rows"),
    OpenApiParameter("principal_type", str, enum=["user", "team"], description="default user"),
]


# --- finding the object -----------------------------------------------------------------------


def _securable(request: Request, kind: str, kwargs: dict[str, Any]) -> Securable:
    """The object of the route as the caller may see it (hidden = missing). A route's kind is
    exact: ``…/tables/{v}`` naming a view is missing, as on the object's own route."""
    parts = [kwargs[k] for k in ("catalog", "database", "name") if k in kwargs]
    _, s = grants.find_securable(request.user, kind, parts)
    if kind == "table" and s.kind is Kind.VIEW:
        path = quote_path(parts)
        raise NotFound(f"Table {path} does not exist; {path} is a view.")
    return s


def _principal_filter(request: Request) -> grants.Principal | None:
    name = request.query_params.get("principal")
    if not name:
        return None
    kind = request.query_params.get("principal_type", "user")
    try:
        return grants.find_principal(kind, name)
    except CoreError as exc:
        field = "principal_type" if exc.code == "VALIDATION_ERROR" else "principal"
        exc.details = {**exc.details, "field": field}
        raise


def _changes(request: Request) -> Any:
    if not isinstance(request.data, dict):
        raise CoreError("The request body must be a JSON object.")
    if "changes" not in request.data:
        raise CoreError(
            'The body needs \'changes\': [{"principal", "principal_type", "add", "remove"}].',
            details={"field": "changes"},
        )
    return request.data["changes"]


class _PermissionsView(APIView):
    kind = ""

    def _get(self, request: Request, kwargs: dict[str, Any]) -> Response:
        s = _securable(request, self.kind, kwargs)
        principal = _principal_filter(request)
        permissions = grants.permissions(user=request.user, securable=s, principal=principal)
        return Response(PermissionsOut(permissions).data)

    def _patch(self, request: Request, kwargs: dict[str, Any]) -> Response:
        s = _securable(request, self.kind, kwargs)
        body = grants.update_permissions(user=request.user, securable=s, changes=_changes(request))
        return Response(PermissionsOut(body).data)


def _permissions_view(kind: str) -> type[_PermissionsView]:
    class View(_PermissionsView):
        @extend_schema(
            parameters=PRINCIPAL_PARAMS,
            responses=PermissionsOut,
            operation_id=f"{kind}_permissions_retrieve",
        )
        def get(self, request: Request, **kwargs: Any) -> Response:
            return self._get(request, kwargs)

        @extend_schema(
            request=PermissionsPatchIn,
            responses=PermissionsOut,
            operation_id=f"{kind}_permissions_update",
        )
        def patch(self, request: Request, **kwargs: Any) -> Response:
            return self._patch(request, kwargs)

    View.kind = kind
    View.__name__ = View.__qualname__ = f"{kind.capitalize()}PermissionsView"
    return View


CatalogPermissionsView = _permissions_view("catalog")
DatabasePermissionsView = _permissions_view("database")
TablePermissionsView = _permissions_view("table")
ViewPermissionsView = _permissions_view("view")
FunctionPermissionsView = _permissions_view("function")


# --- recent access --------------------------------------------------------------------------


def _access_view(kind: str) -> type[APIView]:
    class View(APIView):
        @extend_schema(
            parameters=PAGE_PARAMS,
            responses=_page_of(AuditEventOut, f"{kind.capitalize()}AccessPage"),
            operation_id=f"{kind}_access_list",
            description="The object's audit events, newest first (MANAGE on it).",
        )
        def get(self, request: Request, **kwargs: Any) -> Response:
            s = _securable(request, kind, kwargs)
            grants.require(request.user, s, Privilege.MANAGE)
            page = page_request(request)
            found = audit_selectors.events_of(s.key, after=page.after, limit=page.size + 1)
            return Response(
                page_body(
                    found,
                    page,
                    audit_selectors.page_key,
                    serialize_page=audit_views.serialize_page,
                )
            )

    View.__name__ = View.__qualname__ = f"{kind.capitalize()}AccessView"
    return View


CatalogAccessView = _access_view("catalog")
DatabaseAccessView = _access_view("database")
TableAccessView = _access_view("table")
ViewAccessView = _access_view("view")
FunctionAccessView = _access_view("function")


# --- storage roots ----------------------------------------------------------------------------


class StorageRootListView(APIView):
    @extend_schema(
        responses=_page_of(StorageRootOut, "StorageRootPage"),
        description="Admins: every storage root with its grants; others: the roots they may "
        "read files under.",
    )
    def get(self, request: Request) -> Response:
        viewer = access.access_for(request.user)
        items = []
        for root in storage.storage_roots():
            s = access.storage_securable(root)
            readable = Privilege.READ_FILES in effective(viewer, s)
            if viewer.admin:
                body = grants.permissions(user=request.user, securable=s)
                items.append(
                    {
                        "path": root,
                        "read_files": readable,
                        "privilege_assignments": body["privilege_assignments"],
                    }
                )
            elif readable:
                items.append({"path": root, "read_files": True})
        return Response(whole_page(StorageRootOut(items, many=True).data))


_PATH_PARAM = [OpenApiParameter("path", str, required=True, description="a configured root")]


def _storage(request: Request) -> Securable:
    path = request.query_params.get("path", "")
    if not path:
        raise CoreError("Name the storage root: ?path=/…", details={"field": "path"})
    _, s = grants.find_securable(request.user, "storage", path=path)
    return s


class StorageRootPermissionsView(APIView):
    @extend_schema(parameters=[*_PATH_PARAM, *PRINCIPAL_PARAMS], responses=PermissionsOut)
    def get(self, request: Request) -> Response:
        s = _storage(request)
        principal = _principal_filter(request)
        permissions = grants.permissions(user=request.user, securable=s, principal=principal)
        return Response(PermissionsOut(permissions).data)

    @extend_schema(parameters=_PATH_PARAM, request=PermissionsPatchIn, responses=PermissionsOut)
    def patch(self, request: Request) -> Response:
        s = _storage(request)
        body = grants.update_permissions(user=request.user, securable=s, changes=_changes(request))
        return Response(PermissionsOut(body).data)
