"""TLS of the Flight SQL endpoint: ``TESSERA_FLIGHT_SQL_TLS_CERT`` and
``TESSERA_FLIGHT_SQL_TLS_KEY``, paths of PEM files (the certificate chain and its private key),
both or neither. Both: the port speaks ``grpc+tls://``; neither: plain ``grpc://``. Anything
else stops the endpoint at start with a sentence naming the setting (never a plain port served
by mistake when TLS was asked for)."""

from __future__ import annotations

import ssl
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

CERT = "TESSERA_FLIGHT_SQL_TLS_CERT"
KEY = "TESSERA_FLIGHT_SQL_TLS_KEY"
MAX_PEM_BYTES = 1024**2


def certificates(cert_path: str, key_path: str) -> list[tuple[bytes, bytes]]:
    """The (certificate chain, private key) pair to serve with, read from the PEM files; none
    when neither path is set."""
    if not cert_path and not key_path:
        return []
    if not cert_path or not key_path:
        given, missing = (CERT, KEY) if cert_path else (KEY, CERT)
        raise ImproperlyConfigured(
            f"{given} is set but {missing} is not: Flight SQL's TLS needs both (a PEM "
            "certificate chain and its private key), or neither for plain gRPC."
        )
    pair = (_pem(cert_path, CERT, b"CERTIFICATE"), _pem(key_path, KEY, b"PRIVATE KEY"))
    try:
        # The standard library's OpenSSL reads both as gRPC will, and checks they match.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path, password=_no_password)
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ImproperlyConfigured(
            f"{KEY}={key_path!r} is not the private key of {CERT}={cert_path!r}, or is "
            f"encrypted ({reason})."
        ) from None
    return [pair]


def _no_password() -> bytes:
    """An encrypted key: gRPC could not read it either, so it is refused here."""
    return b""


def _pem(path: str, setting: str, label: bytes) -> bytes:
    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_PEM_BYTES + 1)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"{setting}={path!r} cannot be read: {exc.strerror or exc}."
        ) from None
    if len(data) > MAX_PEM_BYTES or b"-----BEGIN " not in data or label not in data:
        what = "a certificate" if label == b"CERTIFICATE" else "a private key"
        raise ImproperlyConfigured(f"{setting}={path!r} is not a PEM file holding {what}.")
    return data
