"""Functions (Python by dotted name, SQL by body expression): create, change, drop."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from catalog import access, bodies
from catalog.grants import ownership
from catalog.models import Database, Function
from catalog.services._common import (
    User,
    _check_owner,
    _insert,
    _object_path,
    _record_drop,
    _require,
    _user_or_none,
)
from core.datatypes import DataType, parse_data_type
from core.errors import AlreadyExists, CoreError
from core.identifiers import validate_name
from core.privileges import Privilege

_PYTHON_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _parse_type(text: Any, field: str) -> DataType:
    if not isinstance(text, str):
        raise CoreError(f"'{field}' must be a data type such as INT.", details={"field": field})
    try:
        return parse_data_type(text)
    except CoreError as exc:
        exc.details = {**exc.details, "field": field}
        raise


def _check_function(
    language: str, implementation: str, parameters: Sequence[Any], return_type: str
) -> tuple[list[dict[str, str]], str]:
    if language == Function.LANGUAGE_PYTHON:
        if not _PYTHON_DOTTED_NAME.match(implementation.strip()):
            raise CoreError(
                f"A Python function is named by its dotted path, like 'package.module.func'; "
                f"got '{implementation}'.",
                details={"field": "implementation"},
            )
    elif language == Function.LANGUAGE_SQL:
        if not implementation.strip():
            raise CoreError(
                "A SQL function needs a body expression.", details={"field": "implementation"}
            )
        if not return_type:
            raise CoreError("A SQL function needs a return type.", details={"field": "return_type"})
    else:
        raise CoreError(
            f"Unknown function language '{language}'. Supported: python, sql.",
            details={"field": "language"},
        )
    checked: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, param in enumerate(parameters):
        field = f"parameters[{index}]"
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise CoreError('Each parameter is {"name", "data_type"}.', details={"field": field})
        pname = validate_name(param["name"], "parameter name")
        if pname.lower() in seen:
            raise CoreError(f"Parameter `{pname}` is declared twice.", details={"field": field})
        seen.add(pname.lower())
        ptype = _parse_type(param.get("data_type"), f"{field}.data_type")
        checked.append({"name": pname, "data_type": ptype.sql()})
    returns = _parse_type(return_type, "return_type").sql() if return_type else ""
    return checked, returns


@bodies.audits_refusals
def function_create(
    *,
    user: User,
    database: Database,
    name: str,
    language: str,
    implementation: str,
    parameters: Sequence[Any] = (),
    return_type: str = "",
    comment: str = "",
) -> Function:
    """Create a function (``CREATE`` on the database); ``user`` owns it."""
    _require(user, database, Privilege.CREATE)
    validate_name(name, "function name")
    params, returns = _check_function(language, implementation, parameters, return_type)
    path = _object_path(database, name)
    if database.functions.filter(name_key=name.lower()).exists():
        raise AlreadyExists(f"Function {path} already exists.")
    if language == Function.LANGUAGE_SQL:
        # The body will run with its owner's rights: it may call only what its creator may.
        bodies.check_function_body(user, database, name, implementation)
    function = Function(
        database=database,
        name=name,
        language=language,
        implementation=implementation.strip() if language == "python" else implementation,
        parameters=params,
        return_type=returns,
        comment=comment,
        created_by=_user_or_none(user),
        owner=_user_or_none(user),
    )
    return _insert(function, f"Function {path} already exists.", user)


@bodies.audits_refusals
def function_update(
    *,
    user: User,
    function: Function,
    comment: str | None = None,
    implementation: str | None = None,
    parameters: Sequence[Any] | None = None,
    return_type: str | None = None,
    owner: str | None = None,
) -> Function:
    """Change a function (``MANAGE``); ``owner`` hands it to another user."""
    changes = (comment, implementation, parameters, return_type)
    if owner is None or any(v is not None for v in changes):
        _require(user, function, Privilege.MANAGE)
    _check_owner(user, function, owner)
    params, returns = _check_function(
        function.language,
        implementation if implementation is not None else function.implementation,
        parameters if parameters is not None else function.parameters,
        return_type if return_type is not None else function.return_type,
    )
    if implementation is not None and function.language == Function.LANGUAGE_SQL:
        # Whoever changes the body is judged, whoever owns it: it runs with the owner's rights.
        bodies.check_function_body(user, function.database, function.name, implementation)
    if implementation is not None:
        # As on create: a Python function's dotted name is kept without surrounding space.
        python = function.language == Function.LANGUAGE_PYTHON
        function.implementation = implementation.strip() if python else implementation
    function.parameters, function.return_type = params, returns
    if comment is not None:
        function.comment = comment
    with transaction.atomic():
        function.save()
        if owner is not None:
            ownership.transfer_owner(user=user, row=function, new_owner=owner)
    return function


def function_delete(*, user: User, function: Function) -> None:
    """Drop a function (``MANAGE``), audited (``drop``) in the drop's transaction."""
    _require(user, function, Privilege.MANAGE)
    securable = access.function_securable(function)
    with transaction.atomic():
        function.delete()
        _record_drop(user, securable)
