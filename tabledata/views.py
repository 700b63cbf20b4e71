"""``GET /catalogs/{c}/databases/{d}/tables/{t}/statistics`` (docs/api.md "Table
statistics"): served by the jobs app, which may read both the catalog and the jobs that
committed into a table (the catalog app imports neither jobs nor its events)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog import selectors as catalog_selectors
from catalog.access import access_for, relation_securable, require
from core.errors import NotFound
from core.identifiers import quote_path
from core.privileges import Privilege
from tabledata.statistics import table_statistics


class LastCommitOut(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="ctas, insert or statement_set")
    rows_written = serializers.IntegerField(allow_null=True)
    user = serializers.CharField(allow_null=True)
    job = serializers.UUIDField(allow_null=True, help_text="only when the job is the caller's")


class ColumnFiguresOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    data_type = serializers.CharField(allow_null=True)
    null_count = serializers.IntegerField()
    distinct_count = serializers.IntegerField(
        allow_null=True, help_text="approximate (approx_count_distinct); null for ARRAY/MAP/STRUCT"
    )
    min = serializers.CharField(allow_null=True, help_text="as Spark casts it to a string")
    max = serializers.CharField(allow_null=True, help_text="as Spark casts it to a string")
    avg = serializers.FloatField(allow_null=True, help_text="numbers only")
    avg_length = serializers.FloatField(allow_null=True, help_text="strings and binary only")
    max_length = serializers.IntegerField(allow_null=True, help_text="strings and binary only")


class ColumnStatisticsOut(serializers.Serializer[Any]):
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="when the row count and the columns were computed"
    )
    row_count = serializers.IntegerField(allow_null=True)
    columns = ColumnFiguresOut(many=True)
    files = serializers.IntegerField()
    size_bytes = serializers.IntegerField()
    size_computed_at = serializers.DateTimeField()


class TableStatisticsOut(serializers.Serializer[Any]):
    files = serializers.IntegerField()
    size_bytes = serializers.IntegerField()
    row_count = serializers.IntegerField(allow_null=True)
    row_count_source = serializers.CharField(allow_null=True)
    complete = serializers.BooleanField(help_text="false: more files than were counted")
    last_modified = serializers.DateTimeField(allow_null=True)
    last_commit = LastCommitOut(allow_null=True)
    column_statistics = ColumnStatisticsOut(
        allow_null=True,
        help_text="what the last ANALYZE TABLE … COMPUTE STATISTICS stored; null until then",
    )


class TableStatisticsView(APIView):
    @extend_schema(
        responses=TableStatisticsOut,
        description=(
            "Files, size, row count (Parquet footers) and last commit of a table, and the "
            "statistics the last ANALYZE TABLE stored. Needs SELECT on the table."
        ),
    )
    def get(self, request: Request, catalog: str, database: str, name: str) -> Response:
        table = catalog_selectors.get_table(
            catalog, database, name, access=access_for(request.user)
        )
        # Figures, minimums and maximums are data: reading them needs SELECT, as rows do.
        require(
            request.user,
            relation_securable(table),
            Privilege.SELECT,
            missing=lambda: NotFound(
                f"Table {quote_path([catalog, database, name])} does not exist."
            ),
        )
        stats = table_statistics(table, request.user)
        return Response(TableStatisticsOut(stats).data)
