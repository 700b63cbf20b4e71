"""Throttling of sign-in attempts (``POST /auth/token``, ``POST /auth/login``).

Each attempt costs a password hash (hundreds of milliseconds of CPU) and is a guess at a
password, so attempts are counted per client address: at most
``TESSERA_AUTH_THROTTLE_RATE`` (e.g. ``30/min``) over both endpoints, then
``429 TOO_MANY_REQUESTS`` with ``Retry-After`` until the window has room again. The counts
live in the ``throttle`` cache (the database), which every web process shares.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView


class SignInThrottle(SimpleRateThrottle):
    """Attempts per client address (REMOTE_ADDR, or X-Forwarded-For behind NUM_PROXIES)."""

    scope = "sign_in"

    def __init__(self) -> None:
        # DRF reads the rate when the throttle is made (once per request), so the current
        # settings apply; the counts go to the shared cache, not DRF's default one.
        self.cache: BaseCache = caches["throttle"]
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def get_rate(self) -> str | None:
        rate = settings.TESSERA_AUTH_THROTTLE_RATE
        return str(rate) if rate else None

    def get_cache_key(self, request: Request, view: APIView) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        return bool(super().allow_request(request, view))

    def wait(self) -> float | None:
        seconds: Any = super().wait()
        return None if seconds is None else float(seconds)
