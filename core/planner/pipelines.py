"""``EXECUTE PIPELINE 'pkg.module:function' [WITH ('k' = 'v', …)]`` → action ``pipeline``.

A pipeline runs ``function(t_env, **args)`` on a worker (docs/pipelines.md). Only functions
of the packages the administrator allowed (``TESSERA_PIPELINE_PACKAGES``, handed to the
planner as ``PlanContext.pipeline_packages``) may be named; the entry point is judged here
as text, with nothing imported, and again on the worker before its import. The same plan
is made for ``POST /sessions/{id}/pipelines`` (``plan_pipeline``).
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from core.errors import CoreError
from core.planner.model import PlanContext
from core.planner.plan import Action, Plan
from core.planner.statement import Statement, key_value_list

# Arguments: at most this many, names Python identifiers, values short.
MAX_ARGS = 64
MAX_ARG_CHARS = 4096
MAX_ENTRY_POINT_CHARS = 512
_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_ENTRY_POINT = re.compile(rf"({_NAME}(?:\.{_NAME})*):({_NAME})")


class ForbiddenPipeline(CoreError):
    """A pipeline entry point outside the allowed packages (or not a plain
    ``package.module:function`` name): refused before anything is imported."""

    code: ClassVar[str] = "FORBIDDEN"


def check_entry_point(entry_point: Any, packages: Sequence[str]) -> tuple[str, str]:
    """``(module, function)`` of an entry point ``dotted.module:function`` whose module is
    one of ``packages`` or inside one; raises ``ForbiddenPipeline``. Pure text: no import.

    Every part is an identifier that starts with a letter (no ``_private`` or dunder names,
    no relative ``.module``), no keyword, and the function's name is not a builtin's that
    a module could re-export (``__import__`` is refused as a dunder anyway)."""
    allowed = ", ".join(packages) or "none configured"
    if not isinstance(entry_point, str) or len(entry_point) > MAX_ENTRY_POINT_CHARS:
        raise ForbiddenPipeline(
            f"A pipeline entry point is a string 'package.module:function' of at most "
            f"{MAX_ENTRY_POINT_CHARS} characters.",
            details={"field": "entry_point", "allowed_packages": list(packages)},
        )
    shown = entry_point if len(entry_point) <= 80 else entry_point[:77] + "..."
    found = _ENTRY_POINT.fullmatch(entry_point)
    if found is None or any(keyword.iskeyword(p) for p in re.split(r"[.:]", entry_point)):
        raise ForbiddenPipeline(
            f"The pipeline '{shown}' is not allowed: an entry point is 'package.module:function' "
            "(names that start with a letter; no private, dunder or relative names).",
            details={"entry_point": entry_point, "allowed_packages": list(packages)},
        )
    module, function = found.group(1), found.group(2)
    if not any(module == p or module.startswith(p + ".") for p in packages):
        raise ForbiddenPipeline(
            f"The pipeline '{shown}' is not allowed: pipelines must come from the allowed "
            f"packages ({allowed}).",
            details={"entry_point": entry_point, "allowed_packages": list(packages)},
        )
    return module, function


def check_args(args: Any) -> dict[str, Any]:
    """The pipeline's keyword arguments: an object of at most ``MAX_ARGS`` entries whose keys
    are identifiers and whose values are strings, numbers, booleans or null (JSON scalars),
    each at most ``MAX_ARG_CHARS`` characters as JSON."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise CoreError("'args' must be an object of named values.", details={"field": "args"})
    if len(args) > MAX_ARGS:
        raise CoreError(
            f"A pipeline takes at most {MAX_ARGS} arguments; got {len(args):,}.",
            details={"field": "args", "max": MAX_ARGS},
        )
    checked: dict[str, Any] = {}
    for key, value in args.items():
        shown = str(key)[:40]
        if (
            not isinstance(key, str)
            or not re.fullmatch(_NAME, key)
            or keyword.iskeyword(key)
            or key == "t_env"
        ):
            raise CoreError(
                f"The argument name '{shown}' is not allowed: names are Python identifiers "
                "that start with a letter (and not 't_env').",
                details={"field": "args", "key": shown},
            )
        if value is not None and type(value) not in (str, int, float, bool):
            raise CoreError(
                f"The argument '{key}' must be a string, number, boolean or null.",
                details={"field": "args", "key": key},
            )
        if len(json.dumps(value)) > MAX_ARG_CHARS:
            raise CoreError(
                f"The argument '{key}' is longer than {MAX_ARG_CHARS:,} characters.",
                details={"field": "args", "key": key, "max": MAX_ARG_CHARS},
            )
        checked[key] = value
    return checked


def plan_pipeline(entry_point: Any, args: Any, context: PlanContext, sql: str = "") -> Plan:
    """The plan of a pipeline run: checked entry point and arguments, nothing imported."""
    module, function = check_entry_point(entry_point, context.pipeline_packages)
    return Plan.of(
        Action.PIPELINE,
        needs_spark=True,
        sql=sql,
        args={"entry_point": f"{module}:{function}", "args": check_args(args)},
    )


def plan_execute_pipeline(statement: Statement) -> Plan:
    """``EXECUTE PIPELINE 'pkg.module:function' [WITH ('k' = 'v', …)]``; values are strings."""
    cursor = statement.cursor(1)
    cursor.expect_words("PIPELINE")
    entry_point = cursor.expect_string("the pipeline's entry point as 'package.module:function'")
    args: dict[str, str] = {}
    if cursor.accept_words("WITH"):
        args = key_value_list(cursor)
    if not cursor.at_end:
        raise cursor.error("WITH (…) or the end of the statement")
    sql = statement.text[statement.start : statement.end]
    return plan_pipeline(entry_point, args, statement.context, sql)


def pipeline_sql(entry_point: str, args: Mapping[str, Any]) -> str:
    """The ``EXECUTE PIPELINE`` text a REST run is shown as in the job history."""

    def literal(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value)
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    text = f"EXECUTE PIPELINE {literal(entry_point)}"
    if args:
        text += " WITH (" + ", ".join(f"{literal(k)} = {literal(v)}" for k, v in args.items()) + ")"
    return text
