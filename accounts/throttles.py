"""Throttling of sign-in attempts (``POST /auth/token``, ``POST /auth/login`` and Django
admin's login form, ``POST /admin/login/``).

Each attempt costs a password hash (hundreds of milliseconds of CPU) and is a guess at a
password, so attempts are counted per client address: at most
``TESSERA_AUTH_THROTTLE_RATE`` (e.g. ``30/min``) over all three, then
``429 TOO_MANY_REQUESTS`` with ``Retry-After`` until the window has room again. The counts
live in the ``throttle`` cache (the database), which every web process shares.

The API views use ``SignInThrottle`` as a DRF throttle; the admin's form is a plain Django
view, so it asks ``admit_sign_in`` (the same throttle, the same count).
"""

from __future__ import annotations

import math
from typing import Any, cast

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.http import HttpRequest
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


def retry_after_seconds(wait: float | None) -> int:
    """``Retry-After`` for a throttle's ``wait()``: whole seconds, at least 1 (a client told
    0 would try again at once and be refused again)."""
    return max(1, math.ceil(wait or 1))


def admit_sign_in(request: HttpRequest) -> int | None:
    """Count one sign-in attempt of ``request``'s client address, in the same count as the
    API's sign-in endpoints: None when it may go on, else the seconds to wait (the attempt
    must then be refused without looking at the credentials)."""
    throttle = SignInThrottle()
    # DRF's throttles read the client address from the request's META (a DRF Request hands
    # it through) and never look at the view.
    if throttle.allow_request(Request(request), cast(APIView, None)):
        return None
    return retry_after_seconds(throttle.wait())
