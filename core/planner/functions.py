"""Spark's built-in function names, read lazily from ``spark_builtins.txt``; the identity of
a temporary system function (no catalog, no database).

The list is generated from Spark (``SHOW SYSTEM FUNCTIONS``) and checked against the
running Spark by ``tests/engine/spark/test_builtins_list.py``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from core.identifiers import ObjectIdentifier, name_key, quote_part


@cache
def spark_builtins() -> frozenset[str]:
    """Every built-in function name of Spark, in lower case."""
    text = resources.files("core.planner").joinpath("spark_builtins.txt").read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


# Calls Spark's parser turns into expressions of their own (TimestampAdd, TimestampDiff), so
# SHOW SYSTEM FUNCTIONS does not list them; DATEADD/DATEDIFF are listed under their names.
# GROUP BY's CUBE(…) and ROLLUP(…) beside other grouping expressions (``GROUP BY CUBE(a, b),
# ROLLUP(a, b) GROUPING SETS(…)``) reach Spark's parse as calls; Spark's analyzer answers them
# (UNRESOLVED_ROUTINE where they stand as calls). They name no function of any catalog.
SYNTAX_BUILTINS = frozenset({"timestampadd", "timestampdiff", "cube", "rollup"})


def is_builtin(name: str) -> bool:
    """Whether a one-part function name is a Spark built-in (names are case-insensitive)."""
    key = name_key(name)
    return key in spark_builtins() or key in SYNTAX_BUILTINS


def system_identifier(name: str) -> ObjectIdentifier:
    """The identifier of a temporary system function: no catalog, no database."""
    return ObjectIdentifier("", "", name)


def is_system(ident: ObjectIdentifier) -> bool:
    return ident.catalog == "" and ident.database == ""


def display(ident: ObjectIdentifier) -> str:
    """``name`` quoted for a system function, else the quoted three-part path."""
    return quote_part(ident.name) if is_system(ident) else ident.quoted()
