"""Grants, revokes, SHOW GRANTS, the REST permissions body and ownership transfer
(ADR 0011 §4): the one package that writes ``Grant`` rows and moves ownership, for SQL
commands (``sessions/commands/grants.py``) and REST (``catalog/permission_views.py``) alike.
Every change is one transaction with its audit event (``audit.services.record``).

One module per noun: ``principals`` (users and teams), ``securables`` (finding an object as
the user may see it, and refusing), ``grants`` (GRANT, REVOKE, the REST PATCH, system
grants), ``listing`` (SHOW GRANTS and the REST GET body) and ``ownership`` (transfer);
``_common`` holds the private helpers several of them use. This package re-exports their
public names, so that ``from catalog import grants; grants.grant(...)`` reads as before; the
modules of the package import from one another, never from here.

The signatures and docstrings of ``find_principal``, ``find_securable``, ``grant``,
``revoke``, ``show_grants``, ``permissions``, ``update_permissions`` and ``transfer_owner``
are the contract between the modules (ADR 0011): callers rely on them.

Hidden = missing: an object the caller may not see answers exactly as a missing one
(``hidden_error``), the message the catalog's lookups give for a name that does not exist.
"""

from __future__ import annotations

from catalog.grants.grants import (
    MAX_CHANGES,
    MAX_PRIVILEGES,
    grant,
    parse_privileges,
    revoke,
    system_grant,
    update_permissions,
)
from catalog.grants.listing import GrantLine, can, permissions, show_grants
from catalog.grants.ownership import check_transfer, transfer_owner
from catalog.grants.principals import Principal, PrincipalType, everyone_team, find_principal
from catalog.grants.securables import (
    Row,
    find_securable,
    hidden_error,
    require,
    require_read_files,
    require_visible,
    securable_of,
    storage_root,
)

__all__ = [
    "MAX_CHANGES",
    "MAX_PRIVILEGES",
    "GrantLine",
    "Principal",
    "PrincipalType",
    "Row",
    "can",
    "check_transfer",
    "everyone_team",
    "find_principal",
    "find_securable",
    "grant",
    "hidden_error",
    "parse_privileges",
    "permissions",
    "require",
    "require_read_files",
    "require_visible",
    "revoke",
    "securable_of",
    "show_grants",
    "storage_root",
    "system_grant",
    "transfer_owner",
    "update_permissions",
]
