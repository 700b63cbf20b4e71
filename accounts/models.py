"""API tokens: many per user, each named, optionally expiring, stored only as a hash."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.utils import timezone

MAX_TOKEN_NAME_LENGTH = 100


class ApiToken(models.Model):
    """One token of ``user``. The key itself is shown once, when the token is made; the row
    keeps its SHA-256 (a leaked database or backup holds no usable key)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=MAX_TOKEN_NAME_LENGTH, blank=True, default="")
    # Hex SHA-256 of the key: the lookup of every token-authenticated request.
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(default=timezone.now)
    # Updated at most once a minute (accounts.tokens.LAST_USED_RESOLUTION), not on every request.
    last_used = models.DateTimeField(null=True, blank=True)
    expires = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-id"]
        indexes: ClassVar = [models.Index(fields=["user", "-id"], name="accounts_token_user_idx")]

    def __str__(self) -> str:
        return f"{self.name or 'token'} #{self.pk} of user {self.user_id}"
