"""Catalog REST endpoints. Thin: parse the request, call one service or selector, serialize."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.selectors import page_key as audit_page_key
from catalog import render, schema_history, selectors, services, versions
from catalog import serializers as s
from catalog.access import access_for, shows_figures
from catalog.models import Table
from core.errors import CoreError
from core.identifiers import quote_path
from core.privileges import Access
from core.schema import Schema
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request

CASCADE_PARAM = [OpenApiParameter("cascade", bool, description="drop contents too")]


def _page_of(serializer: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
    return page_of(f"{serializer.__name__}Page", serializer(many=True))


def _schema(data: Any, field: str = "schema") -> Schema:
    try:
        return Schema.from_dict(data)
    except CoreError as exc:
        inner = exc.details.get("field")
        exc.details = {**exc.details, "field": f"{field}.{inner}" if inner else field}
        raise


def _cascade(request: Request) -> bool:
    return request.query_params.get("cascade", "").lower() in {"1", "true", "yes"}


def _many(
    serializer: type[serializers.Serializer[Any]], request: Request
) -> Callable[[Sequence[Any]], list[Any]]:
    """Serialize a whole page with one serializer (``many=True``), not one per row."""

    def serialize(rows: Sequence[Any]) -> list[Any]:
        return list(serializer(rows, many=True, context=_ctx(request)).data)

    return serialize


def _ctx(request: Request) -> dict[str, Any]:
    """Serializer context: ``can`` is computed for the requesting user."""
    return {"user": request.user}


def _access(request: Request) -> Access:
    """What the requesting user holds (loaded once per request)."""
    return access_for(request.user)


def _by_name(row: Any) -> str:
    return str(row.name_key)


class CatalogListView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.CatalogOut))
    def get(self, request: Request) -> Response:
        page = page_request(request)
        rows = selectors.list_catalogs(
            access=_access(request), after=page.after, limit=page.size + 1
        )
        return Response(
            page_body(rows, page, _by_name, serialize_page=_many(s.CatalogOut, request))
        )

    @extend_schema(request=s.CatalogIn, responses={201: s.CatalogOut})
    def post(self, request: Request) -> Response:
        catalog = services.catalog_create(user=request.user, **valid_body(s.CatalogIn, request))
        return Response(s.CatalogOut(catalog, context=_ctx(request)).data, status=201)


class CatalogDetailView(APIView):
    @extend_schema(responses=s.CatalogOut)
    def get(self, request: Request, catalog: str) -> Response:
        return Response(
            s.CatalogOut(
                selectors.get_catalog(catalog, access=_access(request)), context=_ctx(request)
            ).data
        )

    @extend_schema(request=s.CatalogPatch, responses=s.CatalogOut)
    def patch(self, request: Request, catalog: str) -> Response:
        found = selectors.get_catalog(catalog, access=_access(request))
        updated = services.catalog_update(
            user=request.user, catalog=found, **valid_body(s.CatalogPatch, request)
        )
        return Response(s.CatalogOut(updated, context=_ctx(request)).data)

    @extend_schema(parameters=CASCADE_PARAM, responses={204: None})
    def delete(self, request: Request, catalog: str) -> Response:
        services.catalog_delete(
            user=request.user,
            catalog=selectors.get_catalog(catalog, access=_access(request)),
            cascade=_cascade(request),
        )
        return Response(status=204)


class DatabaseListView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.DatabaseOut))
    def get(self, request: Request, catalog: str) -> Response:
        page = page_request(request)
        found = selectors.get_catalog(catalog, access=_access(request))
        rows = selectors.list_databases(
            found, access=_access(request), after=page.after, limit=page.size + 1
        )
        return Response(
            page_body(rows, page, _by_name, serialize_page=_many(s.DatabaseOut, request))
        )

    @extend_schema(request=s.DatabaseIn, responses={201: s.DatabaseOut})
    def post(self, request: Request, catalog: str) -> Response:
        database = services.database_create(
            user=request.user,
            catalog=selectors.get_catalog(catalog, access=_access(request)),
            **valid_body(s.DatabaseIn, request),
        )
        return Response(s.DatabaseOut(database, context=_ctx(request)).data, status=201)


class DatabaseDetailView(APIView):
    @extend_schema(responses=s.DatabaseOut)
    def get(self, request: Request, catalog: str, database: str) -> Response:
        return Response(
            s.DatabaseOut(
                selectors.get_database(catalog, database, access=_access(request)),
                context=_ctx(request),
            ).data
        )

    @extend_schema(request=s.DatabasePatch, responses=s.DatabaseOut)
    def patch(self, request: Request, catalog: str, database: str) -> Response:
        updated = services.database_update(
            user=request.user,
            database=selectors.get_database(catalog, database, access=_access(request)),
            **valid_body(s.DatabasePatch, request),
        )
        return Response(s.DatabaseOut(updated, context=_ctx(request)).data)

    @extend_schema(parameters=CASCADE_PARAM, responses={204: None})
    def delete(self, request: Request, catalog: str, database: str) -> Response:
        services.database_delete(
            user=request.user,
            database=selectors.get_database(catalog, database, access=_access(request)),
            cascade=_cascade(request),
        )
        return Response(status=204)


class TableListView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.TableOut))
    def get(self, request: Request, catalog: str, database: str) -> HttpResponseBase:
        page = page_request(request)
        found = selectors.get_database(catalog, database, access=_access(request))
        rows = selectors.list_tables(
            found, Table.KIND_TABLE, access=_access(request), after=page.after, limit=page.size + 1
        )
        return render.page_response(rows, page, render.table_json(found, request.user))

    @extend_schema(request=s.TableIn, responses={201: s.TableOut})
    def post(self, request: Request, catalog: str, database: str) -> Response:
        data = valid_body(s.TableIn, request)
        found = selectors.get_database(catalog, database, access=_access(request))
        if "properties" in data:
            table = services.table_create_from_properties(
                user=request.user,
                database=found,
                name=data["name"],
                properties=data["properties"],
                comment=data["comment"],
            )
        else:
            table = services.table_create(
                user=request.user,
                database=found,
                name=data["name"],
                schema=_schema(data["schema"]),
                options=data["options"],
                partition_by=data["partition_by"],
                comment=data["comment"],
            )
        return Response(s.table_out(table, request.user), status=201)


class TableDetailView(APIView):
    @extend_schema(responses=s.TableOut)
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        return Response(
            s.table_out(
                selectors.get_table(catalog, database, name, access=_access(request)), request.user
            )
        )

    @extend_schema(request=s.TablePatch, responses=s.TableOut)
    def patch(self, request: Request, catalog: str, database: str, name: str) -> Response:
        data = valid_body(s.TablePatch, request)
        if "schema" in data:
            data["schema"] = _schema(data["schema"])
        table = services.table_update(
            user=request.user,
            table=selectors.get_table(catalog, database, name, access=_access(request)),
            **data,
        )
        return Response(s.table_out(table, request.user))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, catalog: str, database: str, name: str) -> Response:
        services.table_delete(
            user=request.user,
            table=selectors.get_table(catalog, database, name, access=_access(request)),
        )
        return Response(status=204)


class TableVersionListView(APIView):
    """``GET …/tables/{t}/versions``: a managed table's versions, newest first."""

    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.TableVersionOut))
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        page = page_request(request)
        table = selectors.get_table(catalog, database, name, access=_access(request))
        if not table.managed:
            raise CoreError(
                f"Table {quote_path([catalog, database, name])} is an external table: only "
                "managed tables have versions.",
                details={"field": "name"},
            )
        after = page.after
        if after is not None and (
            not isinstance(after, int) or isinstance(after, bool) or not 0 < after <= 2**31
        ):
            raise CoreError(
                "The page_token is not one this server issued; start again without it.",
                details={"field": "page_token"},
            )
        rows = versions.history(table)
        if after is not None:
            rows = rows.filter(version__lt=after)
        found = list(rows[: page.size + 1])
        # Row counts and metrics come from the data: SELECT only (USE sees the versions).
        context = {**_ctx(request), "figures": shows_figures(_access(request), table)}
        return Response(
            page_body(
                found,
                page,
                lambda row: row.version,
                serialize_page=lambda shown: list(
                    s.TableVersionOut(shown, many=True, context=context).data
                ),
            )
        )


class TableSchemaChangeListView(APIView):
    """``GET …/tables/{t}/schema-changes``: the table's creation and schema changes."""

    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=_page_of(s.SchemaChangeOut),
        description="The table's create and alter audit events, newest first, each with what "
        "changed (anyone who may see the table).",
    )
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        page = page_request(request)
        table = selectors.get_table(catalog, database, name, access=_access(request))
        found = schema_history.schema_changes(table, after=page.after, limit=page.size + 1)
        return Response(
            page_body(
                found,
                page,
                lambda row: audit_page_key(row.event),
                serialize_page=lambda shown: list(s.SchemaChangeOut(shown, many=True).data),
            )
        )


class TablePropertiesView(APIView):
    @extend_schema(responses=s.TablePropertiesOut)
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        from core.properties import encode_table

        table = selectors.get_table(catalog, database, name, access=_access(request))
        properties = encode_table(Schema.from_dict(table.schema), table.options, table.partition_by)
        return Response(s.TablePropertiesOut({"properties": properties}).data)


class ViewListView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.ViewOut))
    def get(self, request: Request, catalog: str, database: str) -> HttpResponseBase:
        page = page_request(request)
        found = selectors.get_database(catalog, database, access=_access(request))
        rows = selectors.list_tables(
            found, Table.KIND_VIEW, access=_access(request), after=page.after, limit=page.size + 1
        )
        return render.page_response(rows, page, render.view_json(found, request.user))

    @extend_schema(request=s.ViewIn, responses={201: s.ViewOut})
    def post(self, request: Request, catalog: str, database: str) -> Response:
        data = valid_body(s.ViewIn, request)
        view = services.view_create(
            user=request.user,
            database=selectors.get_database(catalog, database, access=_access(request)),
            name=data["name"],
            query=data["query"],
            comment=data["comment"],
            schema=_schema(data["schema"]) if data.get("schema") is not None else None,
        )
        return Response(s.table_out(view, request.user), status=201)


class ViewDetailView(APIView):
    @extend_schema(responses=s.ViewOut)
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        return Response(
            s.table_out(
                selectors.get_table(catalog, database, name, "view", access=_access(request)),
                request.user,
            )
        )

    @extend_schema(request=s.ViewPatch, responses=s.ViewOut)
    def patch(self, request: Request, catalog: str, database: str, name: str) -> Response:
        data = valid_body(s.ViewPatch, request)
        if data.get("schema") is not None:
            data["schema"] = _schema(data["schema"])
        view = services.view_update(
            user=request.user,
            view=selectors.get_table(catalog, database, name, "view", access=_access(request)),
            **data,
        )
        return Response(s.table_out(view, request.user))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, catalog: str, database: str, name: str) -> Response:
        view = selectors.get_table(catalog, database, name, "view", access=_access(request))
        services.table_delete(user=request.user, table=view)
        return Response(status=204)


class FunctionListView(APIView):
    @extend_schema(parameters=PAGE_PARAMS, responses=_page_of(s.FunctionOut))
    def get(self, request: Request, catalog: str, database: str) -> Response:
        page = page_request(request)
        found = selectors.get_database(catalog, database, access=_access(request))
        rows = selectors.list_functions(
            found, access=_access(request), after=page.after, limit=page.size + 1
        )
        return Response(
            page_body(rows, page, _by_name, serialize_page=_many(s.FunctionOut, request))
        )

    @extend_schema(request=s.FunctionIn, responses={201: s.FunctionOut})
    def post(self, request: Request, catalog: str, database: str) -> Response:
        function = services.function_create(
            user=request.user,
            database=selectors.get_database(catalog, database, access=_access(request)),
            **valid_body(s.FunctionIn, request),
        )
        return Response(s.FunctionOut(function, context=_ctx(request)).data, status=201)


class FunctionDetailView(APIView):
    @extend_schema(responses=s.FunctionOut)
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        return Response(
            s.FunctionOut(
                selectors.get_function(catalog, database, name, access=_access(request)),
                context=_ctx(request),
            ).data
        )

    @extend_schema(request=s.FunctionPatch, responses=s.FunctionOut)
    def patch(self, request: Request, catalog: str, database: str, name: str) -> Response:
        function = services.function_update(
            user=request.user,
            function=selectors.get_function(catalog, database, name, access=_access(request)),
            **valid_body(s.FunctionPatch, request),
        )
        return Response(s.FunctionOut(function, context=_ctx(request)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, catalog: str, database: str, name: str) -> Response:
        services.function_delete(
            user=request.user,
            function=selectors.get_function(catalog, database, name, access=_access(request)),
        )
        return Response(status=204)


class SearchView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, required=True, description="text in the name"),
            OpenApiParameter("kind", str, enum=list(selectors.SEARCH_KINDS)),
            *PAGE_PARAMS,
        ],
        responses=_page_of(s.SearchHitOut),
    )
    def get(self, request: Request) -> Response:
        q = request.query_params.get("q", "")
        if not q.strip():
            raise CoreError("Search needs some text: ?q=…", details={"field": "q"})
        kind = request.query_params.get("kind")
        if kind and kind not in selectors.SEARCH_KINDS:
            raise CoreError(
                f"Unknown kind '{kind}'. Use one of: {', '.join(selectors.SEARCH_KINDS)}.",
                details={"field": "kind"},
            )
        page = page_request(request)
        hits = selectors.search(
            q.strip(),
            access=_access(request),
            kinds=(kind,) if kind else selectors.SEARCH_KINDS,
            after=page.after,
            limit=page.size + 1,
        )
        return Response(
            page_body(
                hits, page, lambda h: list(h.key), serialize_page=_many(s.SearchHitOut, request)
            )
        )
