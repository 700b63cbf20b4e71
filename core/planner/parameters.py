"""Named parameter markers (``:name``) of a query and the values sent with it.

The values never become SQL text: the worker hands them to Spark beside the statement
(``spark.sql(text, args=…)``) with Spark's text substitution of parameters switched off
(``spark.sql.legacy.parameterSubstitution.constantsOnly``), so Spark binds each one as a
literal at analysis and parses exactly the text the guard checked. Here, before anything
is planned, the markers the planner's tokenizer reads are matched against the values:
a marker without a value, or a value without a marker, is a ``VALIDATION_ERROR`` that
names it. The worker's guard then checks that Spark's own parse has the same markers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.errors import CoreError
from core.planner.tokens import Token, tokenize

MAX_PARAMETERS = 100
MAX_NAME_CHARS = 128
MAX_VALUE_CHARS = 65_536
# Spark binds a Python int as BIGINT at most.
_BIGINT = (-(2**63), 2**63 - 1)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names of the parameters Tessera adds itself (the session's current catalog and database).
RESERVED_PREFIX = "__tessera_"
SESSION_FUNCTIONS = {
    "current_catalog": "__tessera_current_catalog",
    "current_database": "__tessera_current_database",
    "current_schema": "__tessera_current_database",
}

Value = str | int | float | bool | None


def _is_field_declaration(tokens: Sequence[Token], index: int) -> bool:
    """``STRUCT<a: INT, b: STRING>``: the colon of a struct field, not a marker."""
    return (
        index >= 2
        and tokens[index - 1].is_name
        and tokens[index - 2].is_punct("<", ",")
        and _inside_angle(tokens, index)
    )


def _inside_angle(tokens: Sequence[Token], index: int) -> bool:
    depth = 0
    for token in reversed(tokens[:index]):
        if token.is_punct(">"):
            depth += 1
        elif token.is_punct("<"):
            if depth == 0:
                return True
            depth -= 1
        elif token.is_punct("(", ")", ";"):
            return False
    return False


def markers(sql: str, tokens: Sequence[Token] | None = None) -> list[tuple[str, int]]:
    """Every ``:name`` marker of ``sql`` with its offset, in order (repeats included).
    Strings, comments and quoted names are not read for markers."""
    tokens = tokenize(sql) if tokens is None else tokens
    found: list[tuple[str, int]] = []
    for index, token in enumerate(tokens[:-1]):
        following = tokens[index + 1]
        if token.is_punct(":") and following.is_name and not _is_field_declaration(tokens, index):
            found.append((following.text, token.start))
    return found


def marker_names(sql: str) -> list[str]:
    """The distinct marker names of ``sql``, in order of first use."""
    return list(dict.fromkeys(name for name, _ in markers(sql)))


def check_values(values: Any) -> dict[str, Value]:
    """The request's ``parameters``: a JSON object of at most ``MAX_PARAMETERS`` names
    (plain identifiers) to strings (at most ``MAX_VALUE_CHARS``), numbers, booleans or
    null. Raises ``CoreError`` (``details.field``) otherwise."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise CoreError(
            "'parameters' must be an object of names to values.", details={"field": "parameters"}
        )
    if len(values) > MAX_PARAMETERS:
        raise CoreError(
            f"A statement takes at most {MAX_PARAMETERS} parameters; {len(values)} were sent.",
            details={"field": "parameters", "maximum": MAX_PARAMETERS},
        )
    checked: dict[str, Value] = {}
    seen: dict[str, str] = {}
    for name, value in values.items():
        field = f"parameters.{str(name)[:MAX_NAME_CHARS]}"
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not NAME.fullmatch(name):
            raise CoreError(
                "A parameter name must be a plain identifier (letters, digits and _, not "
                f"starting with a digit, at most {MAX_NAME_CHARS} characters).",
                details={"field": field},
            )
        if name.lower().startswith(RESERVED_PREFIX):
            raise CoreError(
                f"Parameter names starting with {RESERVED_PREFIX} are Tessera's own.",
                details={"field": field},
            )
        if name.lower() in seen:
            raise CoreError(
                f"Parameters :{seen[name.lower()]} and :{name} are the same name "
                "(names are case-insensitive).",
                details={"field": field},
            )
        seen[name.lower()] = name
        checked[name] = _check_value(name, value, field)
    return checked


def _check_value(name: str, value: Any, field: str) -> Value:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            raise CoreError(
                f"The value of :{name} has {len(value)} characters; at most "
                f"{MAX_VALUE_CHARS} are accepted.",
                details={"field": field, "maximum": MAX_VALUE_CHARS},
            )
        return value
    if isinstance(value, int):
        if not _BIGINT[0] <= value <= _BIGINT[1]:
            raise CoreError(
                f"The value of :{name} does not fit a BIGINT; send it as a string.",
                details={"field": field},
            )
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise CoreError(
        f"The value of :{name} must be a string, a number, true, false or null.",
        details={"field": field},
    )


def bind(sql: str, values: Mapping[str, Value]) -> dict[str, Value]:
    """Match the statement's markers and the values: every marker needs a value and every
    value a marker (names are case-insensitive, as in Spark). Returns the values keyed by
    the names as the statement spells them."""
    found = markers(sql)
    by_key = {name.lower(): name for name in values}
    bound: dict[str, Value] = {}
    for name, offset in found:
        key = by_key.get(name.lower())
        if key is None:
            raise CoreError(
                f"The statement uses the parameter :{name}, but no value was sent for it.",
                details={"field": "parameters", "parameter": name, "position": offset},
            )
        bound[name] = values[key]
    used = {name.lower() for name, _ in found}
    for name in values:
        if name.lower() not in used:
            raise CoreError(
                f"A value was sent for the parameter :{name}, but the statement has no "
                f":{name} marker.",
                details={"field": f"parameters.{name}", "parameter": name},
            )
    return bound


def session_functions(
    sql: str, catalog: str | None, database: str | None
) -> tuple[str, dict[str, Value]]:
    """``current_catalog()``, ``current_database()`` and ``current_schema()`` of a query
    answer the Tessera session's values, not Spark's own (``spark_catalog``): each call is
    replaced by a parameter marker whose value (the name, or null) Spark binds as a literal.
    Returns the text and the parameters it needs (none: the text as it was)."""
    tokens = tokenize(sql)
    pieces: list[str] = []
    values: dict[str, Value] = {}
    last = 0
    for index, token in enumerate(tokens[:-2]):
        marker = SESSION_FUNCTIONS.get(token.text.lower()) if token.kind == "word" else None
        if marker is None or (index and tokens[index - 1].is_punct(".")):
            continue
        if not (tokens[index + 1].is_punct("(") and tokens[index + 2].is_punct(")")):
            continue
        pieces += [sql[last : token.start], f":{marker}"]
        last = tokens[index + 2].end
        values[marker] = catalog if marker.endswith("catalog") else database
    if not values:
        return sql, {}
    return "".join([*pieces, sql[last:]]), values


def shown(values: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a user sent (without Tessera's own)."""
    return {k: v for k, v in values.items() if not k.lower().startswith(RESERVED_PREFIX)}
