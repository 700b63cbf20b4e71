"""Sample Python UDFs that Tessera allows by default (``TESSERA_UDF_PACKAGES``).

A catalog function names one of these by its dotted path::

    CREATE FUNCTION slugify AS 'tessera_udfs.text.slugify' LANGUAGE PYTHON

Workers import UDFs only from the allowlisted packages. Each function declares its Spark
return type with :func:`returns`; a catalog function's own ``return_type`` wins over it.
Functions run on Spark's Python workers, one row at a time, and receive ``None`` for SQL NULL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

RETURN_TYPE_ATTRIBUTE = "spark_return_type"


def returns(data_type: str) -> Callable[[F], F]:
    """Declare the Spark SQL return type of a UDF (e.g. ``"STRING"``, ``"DOUBLE"``)."""

    def mark(function: F) -> F:
        setattr(function, RETURN_TYPE_ATTRIBUTE, data_type)
        return function

    return mark
