"""HiveServer2 over HTTP: ``POST /cliservice`` on the web port, one Thrift call per request
(Thrift's binary protocol in the body, ``application/x-thrift``), HTTP Basic credentials —
a user's name and password, or ``token`` and an API token — on every request (ADR 0013).

A credential checked once is remembered for ``SIGNED_IN_SECONDS`` under the SHA-256 of the
header (salted with the secret key), so that a client's many calls cost one password hash and
one count in the sign-in throttle, until the user's password changes; the handler still
reads the user (and checks a token) again at every call. Operations and fetch positions live
in a cache every web process shares.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from thrift.protocol.TProtocol import TProtocolException  # type: ignore[import-untyped]
from thrift.transport.TTransport import (  # type: ignore[import-untyped]
    TMemoryBuffer,
    TTransportException,
)

from hiveserver2 import auth
from hiveserver2.handler import Handler
from hiveserver2.operations import SharedRegistry
from hiveserver2.protocol import BinaryProtocol, TCLIService
from hiveserver2.sasl import SaslRefused

SIGNED_IN_SECONDS = 300
THRIFT = "application/x-thrift"


def _refused(reason: str) -> HttpResponse:
    response = HttpResponse(reason, status=401, content_type="text/plain; charset=utf-8")
    response["WWW-Authenticate"] = 'Basic realm="Tessera HiveServer2"'
    return response


def _signed_in(request: HttpRequest) -> auth.SignedIn:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        raise SaslRefused("Send HTTP Basic credentials. [NOT_AUTHENTICATED]")
    cache = caches["hiveserver2"]
    salted = f"{settings.SECRET_KEY}\x00{header}".encode("utf-8", "surrogatepass")
    remembered = f"signed-in:{hashlib.sha256(salted).hexdigest()}"
    found = cache.get(remembered)
    if isinstance(found, auth.SignedIn) and not found.password_changed():
        return found
    try:
        name, _, password = base64.b64decode(value, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise SaslRefused("Malformed Basic credentials. [NOT_AUTHENTICATED]") from None
    peer = str(request.META.get("REMOTE_ADDR", ""))
    signed_in = auth.sign_in(name, password, peer)
    cache.set(remembered, signed_in, SIGNED_IN_SECONDS)
    return signed_in


@csrf_exempt
def cliservice(request: HttpRequest) -> HttpResponse:
    """One TCLIService call."""
    if request.method != "POST":
        response = HttpResponse(status=405)
        response["Allow"] = "POST"
        return response
    try:
        signed_in = _signed_in(request)
    except SaslRefused as exc:
        return _refused(str(exc))
    limit = settings.TESSERA_HS2_MAX_FRAME_BYTES
    incoming = BinaryProtocol(
        TMemoryBuffer(request.body), string_length_limit=limit, container_length_limit=limit
    )
    outgoing = TMemoryBuffer()
    registry = SharedRegistry(caches["hiveserver2"])
    try:
        TCLIService.Processor(Handler(signed_in, registry)).process(
            incoming, BinaryProtocol(outgoing)
        )
    except (TProtocolException, TTransportException, EOFError):
        return HttpResponse("Not a Thrift call.", status=400, content_type="text/plain")
    return HttpResponse(outgoing.getvalue(), content_type=THRIFT)
