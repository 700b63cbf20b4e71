"""A user who is deactivated (Django admin, a shell, any ``save()``) loses every token and
browser session at once. ``QuerySet.update`` sends no signal; the authentication classes
refuse inactive users all the same, this makes it final (re-activation revives nothing)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from accounts.tokens import user_access_end


@receiver(pre_save, sender=User, dispatch_uid="accounts.deactivation.before")
def _note_deactivation(sender: Any, instance: User, update_fields: Any = None, **_: Any) -> None:
    if instance.pk is None or instance.is_active:
        return
    if update_fields is not None and "is_active" not in update_fields:
        return
    # One query, only when an inactive user is saved: was it active until now?
    instance._tessera_deactivated = User.objects.filter(  # type: ignore[attr-defined]
        pk=instance.pk, is_active=True
    ).exists()


@receiver(post_save, sender=User, dispatch_uid="accounts.deactivation.after")
def _end_access(sender: Any, instance: User, created: bool = False, **_: Any) -> None:
    if getattr(instance, "_tessera_deactivated", False):
        instance._tessera_deactivated = False  # type: ignore[attr-defined]
        user_access_end(instance)
