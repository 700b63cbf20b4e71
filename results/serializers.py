"""Response shapes of results: a page of rows and a chart's points."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from results.selectors import ResultPage
from webapp.pagination import encode_page_token


class ColumnOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    data_type = serializers.CharField(
        help_text="Spark SQL type; NOT NULL of nested fields, elements and values inside it"
    )
    nullable = serializers.BooleanField(
        default=True,
        help_text="false when Spark's analysis says the column never holds NULL (results "
        "stored before this field: true)",
    )
    served_as = serializers.CharField(
        required=False,
        help_text="present when the values are Spark's text of each value ('STRING'): types "
        "Arrow cannot carry (year-month and calendar intervals) and dates or timestamps "
        "beyond Python's years 1 to 9999",
    )


class _Rows(serializers.ListField):
    """The rows as the results store gives them: already JSON values, passed on unchanged
    (a field per cell would cost a call per value on pages of up to 1,000 rows)."""

    def to_representation(self, data: Any) -> Any:
        return data


class _NextPageToken(serializers.CharField):
    """The offset of the next page as a page token (null: this is the last page)."""

    def get_attribute(self, instance: ResultPage) -> str | None:
        following = instance.next
        return encode_page_token(following) if following is not None else None


class ResultPageOut(serializers.Serializer[ResultPage]):
    columns = ColumnOut(many=True)
    rows = _Rows(child=serializers.ListField(child=serializers.JSONField()))
    next_page_token = _NextPageToken(allow_null=True)
    row_count = serializers.IntegerField(
        help_text="rows of the whole result, sorted and filtered as asked (complete false: "
        "the rows written so far)"
    )
    complete = serializers.BooleanField(
        help_text="false while the job still writes its result: these are the rows written "
        "so far, and more may come (next_page_token is then never null)"
    )


class ChartXOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["number", "time", "text"])


class ChartSeriesOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    values = serializers.ListField(child=serializers.FloatField(allow_null=True))


class ResultChartOut(serializers.Serializer[Any]):
    x_column = ChartXOut()
    aggregation = serializers.CharField()
    rows = serializers.IntegerField(help_text="rows of the (filtered) result charted")
    binned = serializers.BooleanField(help_text="X was cut into equal-width bins")
    bin_width = serializers.FloatField(
        allow_null=True, help_text="in X's units: numbers, days (DATE), microseconds"
    )
    sampled = serializers.BooleanField(help_text="aggregation none: rows evenly sampled")
    groups = serializers.IntegerField(help_text="distinct X values (or bins) found")
    omitted_groups = serializers.IntegerField(help_text="text X: smaller groups left out")
    x = serializers.ListField(child=serializers.JSONField())
    series = ChartSeriesOut(many=True)


def result_page_out(page: ResultPage) -> dict[str, Any]:
    """``{"columns", "rows", "next_page_token", "row_count", "complete"}``."""
    return dict(ResultPageOut(page).data)


def result_chart_out(chart: dict[str, Any]) -> dict[str, Any]:
    """A chart's points (``results.queries.chart_data``) in their documented shape."""
    return dict(ResultChartOut(chart).data)
