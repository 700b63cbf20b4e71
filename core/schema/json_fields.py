"""Reading a schema's JSON form: each failure names the JSON path of the offending value
(``details["field"]``, e.g. ``columns[1].expression``) and the column where there is one
(``details["column"]``); data type text that does not parse raises ``DataTypeError`` with
the same two entries added to its details."""

from __future__ import annotations

from typing import Any

from core.datatypes import DataType, parse_data_type
from core.errors import DataTypeError, SchemaError


def _error(message: str, field: str | None, column: str | None = None) -> SchemaError:
    details: dict[str, Any] = {}
    if field is not None:
        details["field"] = field
    if column is not None:
        details["column"] = column
    return SchemaError(message, details=details)


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(f"Field '{path}' must be a JSON object.", path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _error(f"Field '{path}' must be a list.", path)
    return list(value)


def _str(obj: dict[str, Any], key: str, path: str, column: str | None = None) -> str:
    field = f"{path}.{key}" if path else key
    if key not in obj:
        raise _error(f"Field '{field}' is required.", field, column)
    value = obj[key]
    if not isinstance(value, str):
        raise _error(f"Field '{field}' must be a string.", field, column)
    return value


def _optional_str(
    obj: dict[str, Any], key: str, path: str, column: str | None = None
) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        field = f"{path}.{key}" if path else key
        raise _error(f"Field '{field}' must be a string or null.", field, column)
    return value


def _optional_bool(
    obj: dict[str, Any], key: str, path: str, default: bool, column: str | None = None
) -> bool:
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        field = f"{path}.{key}" if path else key
        raise _error(f"Field '{field}' must be true or false.", field, column)
    return value


def _parse_type(text: str, field: str, column: str | None) -> DataType:
    try:
        return parse_data_type(text)
    except DataTypeError as error:
        details = dict(error.details, field=field)
        if column is not None:
            details["column"] = column
        raise DataTypeError(error.message, details=details) from None


def _data_type(obj: dict[str, Any], path: str, column: str) -> DataType:
    return _parse_type(_str(obj, "data_type", path, column), f"{path}.data_type", column)


def _optional_data_type(obj: dict[str, Any], path: str, column: str | None) -> DataType | None:
    text = _optional_str(obj, "data_type", path, column)
    return None if text is None else _parse_type(text, f"{path}.data_type", column)


def _primary_key_columns(obj: dict[str, Any]) -> tuple[str, ...]:
    if "columns" not in obj:
        raise _error("Field 'primary_key.columns' is required.", "primary_key.columns")
    names = _list(obj["columns"], "primary_key.columns")
    for index, name in enumerate(names):
        if not isinstance(name, str):
            path = f"primary_key.columns[{index}]"
            raise _error(f"Field '{path}' must be a string.", path)
    return tuple(names)


def _watermarks_from_dict(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    return [_object(item, f"watermarks[{i}]") for i, item in enumerate(_list(value, "watermarks"))]
