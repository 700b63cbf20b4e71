"""The demo catalog (``manage.py bootstrap``) brings the types of its expressions with it
(it is created before a worker may be up): they must be what Spark's analyzer says."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.management.commands.bootstrap import (
    DEMO_ORDERS,
    DEMO_PAGE_VIEWS,
    DemoTypes,
)
from catalog.services import resolve_schema
from core.schema import Schema


@pytest.mark.spark
@pytest.mark.parametrize("declared", [DEMO_ORDERS, DEMO_PAGE_VIEWS], ids=["orders", "page_views"])
def test_the_demo_types_are_sparks(plain_spark: Any, declared: dict[str, Any]) -> None:
    from engine.typing import SparkExpressionTyper

    schema = Schema.from_dict(declared)
    by_spark = resolve_schema(schema, SparkExpressionTyper(plain_spark))
    assert by_spark.expressions_resolved
    assert resolve_schema(schema, DemoTypes()) == by_spark
