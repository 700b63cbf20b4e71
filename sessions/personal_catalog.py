"""A user's own catalog, created on first use (``TESSERA_PERSONAL_CATALOG``).

PyFlink starts every session in ``default_catalog.default_database`` and Databricks in a
default catalog; here a session of a user with no place at all (``workspace.starting_point``:
no last used, chosen or server default catalog) starts in the user's personal catalog, made
the first time it is needed by ``catalog_create`` as if the user had run ``CREATE CATALOG``:
owned by them (so private until they grant something), with its ``default`` database, and a
``create`` audit event with them as the actor.

- The name is ``TESSERA_PERSONAL_CATALOG`` with ``{user}`` replaced by the user name, lower
  case, each character other than ``a-z``, ``0-9`` and ``_`` made ``_`` (``alice@corp.io`` →
  ``user_alice_corp_io``): a plain identifier, no backquotes needed.
- A catalog of that name owned by someone else (or a name that is not one): the name with the
  user's id appended (``user_alice_corp_io_42``); owned by someone else too: no catalog.
- A catalog of that name the user owns is theirs, whoever made it: no second one.
- Two sessions opened at once by a new user: both try the insert, the catalog's unique name
  lets one win; the other reads the winner's row (its owner is the user) and uses it.
- None when the setting is empty, or when the user may not create catalogs
  (``TESSERA_CATALOG_CREATORS = admins``: an admin gives such users a place instead).
"""

from __future__ import annotations

import re

from django.conf import settings

from catalog import services as catalog_services
from catalog.models import Catalog
from core.errors import AlreadyExists
from core.identifiers import MAX_NAME_LENGTH
from jobs.selectors import User, user_id

_NOT_IDENTIFIER = re.compile(r"[^a-z0-9_]")


def personal_names(user: User) -> list[str]:
    """The names the user's personal catalog may take, in order (none when switched off)."""
    template = str(getattr(settings, "TESSERA_PERSONAL_CATALOG", "") or "")
    if "{user}" not in template:
        return []
    base = template.replace("{user}", _NOT_IDENTIFIER.sub("_", user.get_username().lower()))
    if base[:1].isdigit():
        base = f"u{base}"
    suffix = f"_{user_id(user)}"
    return [base[:MAX_NAME_LENGTH], base[: MAX_NAME_LENGTH - len(suffix)] + suffix]


def _owned(name: str, owner: int) -> Catalog | bool | None:
    """The catalog ``name`` when ``owner`` owns it, False when someone else does, else None."""
    found = Catalog.objects.filter(name_key=name.lower()).first()
    if found is None:
        return None
    return found if found.owner_id == owner else False


def personal_catalog(user: User) -> Catalog | None:
    """The user's personal catalog, created now when it does not exist; None when there is
    none for them (switched off, not allowed to create catalogs, both names taken)."""
    if not catalog_services.may_create_catalogs(user):
        return None
    owner = user_id(user)
    for name in personal_names(user):
        found = _owned(name, owner)
        if found is False:
            continue
        if isinstance(found, Catalog):
            return found
        try:
            return catalog_services.catalog_create(
                user=user,
                name=name,
                comment=f"{user.get_username()}'s own catalog, created on first use.",
            )
        except AlreadyExists:  # made at the same moment (by another session of theirs?)
            again = _owned(name, owner)
            if isinstance(again, Catalog):
                return again
    return None
