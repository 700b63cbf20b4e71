"""drf-spectacular hooks that keep the OpenAPI document in line with docs/api.md."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema


def contract_paths(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """Document each route under its contract path (``/api/v1/catalogs``).

    Routes accept an optional trailing slash (``^catalogs/?$``), which drf-spectacular would
    otherwise turn into ``/api/v1/catalogs/``, a path docs/api.md does not name.
    """
    result = []
    for path, path_regex, method, callback in endpoints:
        if path_regex.endswith("/?$") and path.endswith("/") and path != "/":
            path = path.rstrip("/")
        result.append((path, path_regex, method, callback))
    return result


class TesseraAutoSchema(AutoSchema):
    """Names list operations ``…_list``: our list and detail routes share a path prefix, so
    drf-spectacular would otherwise give both ``…_retrieve`` and number them apart."""

    def get_operation_id(self) -> str:
        operation_id = str(super().get_operation_id())
        if self.method == "GET" and type(self.view).__name__.endswith("ListView"):
            return operation_id.removesuffix("_retrieve") + "_list"
        return operation_id
