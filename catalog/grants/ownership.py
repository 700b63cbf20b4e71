"""Ownership: who may hand an object over (``check_transfer``) and the hand-over itself
(``transfer_owner``), audited as ``owner``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from audit import models as audit_models
from audit.services import record
from catalog import access as catalog_access
from catalog import bodies
from catalog.grants._common import _described, _object_json
from catalog.grants.principals import Principal, find_principal
from catalog.grants.securables import Row, hidden_error, securable_of
from core.errors import CoreError, NotFound, PermissionDenied
from core.privileges import Decision, Kind, Privilege


def _new_owner_user(new_owner: Any) -> Any:
    model = get_user_model()
    if isinstance(new_owner, model):
        return new_owner
    if isinstance(new_owner, Principal):
        if new_owner.type != "user":
            raise CoreError(
                "An owner is a user; give a team MANAGE instead.", details={"field": "owner"}
            )
        return model.objects.get(pk=new_owner.id)
    if isinstance(new_owner, str):
        try:
            found = find_principal("user", new_owner)
        except NotFound as exc:
            exc.details = {**exc.details, "field": "owner"}
            raise
        return model.objects.get(pk=found.id)
    raise CoreError("An owner is a user, named by their username.", details={"field": "owner"})


def check_transfer(*, user: Any, row: Row, new_owner: Any) -> Any:
    """The user ``new_owner`` names, when ``user`` may make them the owner of ``row`` (its
    owner, a parent's owner or an admin); else the refusal ``transfer_owner`` would give."""
    s = securable_of(row)
    access = catalog_access.access_for(user)
    if not (access.admin or access.owns(s)):
        if catalog_access.decide(access, s, Privilege.MANAGE) is Decision.HIDDEN:
            raise hidden_error(access, s)
        what = _described(s)
        parents = {
            Kind.CATALOG: "",
            Kind.DATABASE: " or the owner of its catalog",
        }.get(s.kind, ", the owner of its database or catalog")
        raise PermissionDenied(
            f"Only the owner of {what}{parents} or an admin may transfer its ownership.",
            details={**_object_json(s), "privilege": "OWNER", "refused": bodies.OWNER},
        )
    return _new_owner_user(new_owner)


def transfer_owner(*, user: Any, row: Row, new_owner: Any) -> None:
    """Make ``new_owner`` (a user) the owner of ``row``. By its owner, a parent's owner or an
    admin (else ``PermissionDenied``). One transaction with an audit ``owner`` event.

    ``new_owner`` may also be given as a username or a user ``Principal``. A view (or SQL
    function) then runs with the new owner's rights, so its body is planned again with the
    acting user's rights and with the new owner's: if either cannot reach all it reaches,
    ``PermissionDenied`` (``catalog.bodies.check_handover``) and nothing changes."""
    target = check_transfer(user=user, row=row, new_owner=new_owner)
    s = securable_of(row)
    previous_id = row.owner_id
    if previous_id == target.pk:
        return
    bodies.check_handover(user=user, row=row, new_owner=target)
    users = get_user_model().objects
    previous = users.filter(pk=previous_id).first() if previous_id is not None else None
    with transaction.atomic():
        type(row).objects.filter(pk=row.pk).update(owner=target)
        record(
            audit_models.OWNER,
            actor=user if getattr(user, "pk", None) is not None else None,
            object_kind=s.kind.value,
            path=list(s.path),
            securable_key=s.key,
            principal=("user", target.get_username()),
            detail={"previous": previous.get_username() if previous is not None else None},
        )
    row.owner = target
    catalog_access.forget(user)
