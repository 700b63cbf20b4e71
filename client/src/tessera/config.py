"""``TableConfig``: the properties of a server session (``SET key = value``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tessera.environment import TableEnvironment


class TableConfig:
    """The session's properties (``SET key = value``); values are strings."""

    def __init__(self, env: TableEnvironment) -> None:
        self._env = env

    def set(self, key: str, value: str) -> TableConfig:
        """Set one property for the session (allowlisted keys only, as with ``SET``)."""
        properties = dict(self._env._session_json()["properties"])
        properties[key] = str(value)
        self._env._session = self._env._http.patch(self._env._path, {"properties": properties})
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        """A property's value as the server stored it (canonical), or ``default``."""
        value = self._env._session_json()["properties"].get(key, default)
        return None if value is None else str(value)

    def reset(self, key: str) -> TableConfig:
        """Remove one property (``RESET key``)."""
        properties = dict(self._env._session_json()["properties"])
        properties.pop(key, None)
        self._env._session = self._env._http.patch(self._env._path, {"properties": properties})
        return self

    def to_dict(self) -> dict[str, str]:
        """Every property set in the session."""
        return dict(self._env._session_json()["properties"])
