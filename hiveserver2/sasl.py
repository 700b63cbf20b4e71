"""The server side of Thrift's SASL transport, mechanism PLAIN only (ADR 0013).

The exchange (Thrift's ``TSaslTransport``, as Hive's JDBC driver, PyHive/thrift_sasl and
impyla speak it): every negotiation message is one status byte, a 4-byte big-endian length
and the payload. The client sends START with the mechanism name, then OK or COMPLETE with
PLAIN's one message, ``authzid NUL authcid NUL password`` (RFC 4616); the server answers
COMPLETE (signed in) or BAD with a reason, and closes. After it, every Thrift message travels
as a frame of a 4-byte length and the bytes (PLAIN has no security layer to wrap them in).

Frames are bounded: a negotiation message over ``NEGOTIATION_MAX_BYTES`` or a data frame over
the server's frame limit ends the connection before its bytes are read.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from typing import Any

from thrift.transport.TTransport import (  # type: ignore[import-untyped]
    TTransportBase,
    TTransportException,
)

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
NEGOTIATION_MAX_BYTES = 64 * 1024
_HEADER = struct.Struct(">BI")
_LENGTH = struct.Struct(">I")


class SaslRefused(Exception):
    """The SASL exchange failed: the client was told why (BAD or ERROR) and the connection
    must be closed."""


def parse_plain(payload: bytes) -> tuple[str, str]:
    """The (user name, password) of a PLAIN message; ``SaslRefused`` if it is not one."""
    parts = payload.split(b"\x00")
    if len(parts) != 3 or not parts[1]:
        raise SaslRefused("Malformed PLAIN message: expected authzid NUL user NUL password.")
    try:
        return parts[1].decode("utf-8"), parts[2].decode("utf-8")
    except UnicodeDecodeError:
        raise SaslRefused("The user name and password must be UTF-8.") from None


class SaslServerTransport(TTransportBase):  # type: ignore[misc]
    """A Thrift transport over ``inner`` (a connected ``TSocket``): ``negotiate`` runs the
    PLAIN exchange, then reads and writes are SASL frames of at most ``max_frame`` bytes."""

    def __init__(self, inner: Any, max_frame: int) -> None:
        self.inner = inner
        self.max_frame = max_frame
        self._read = memoryview(b"")
        self._write: list[bytes] = []

    # --- negotiation -----------------------------------------------------------------------

    def _receive(self) -> tuple[int, bytes]:
        status, length = _HEADER.unpack(self.inner.readAll(_HEADER.size))
        if status not in (START, OK, BAD, ERROR, COMPLETE):
            raise SaslRefused(f"Malformed SASL message: unknown status {status}.")
        if length > NEGOTIATION_MAX_BYTES:
            raise SaslRefused(f"SASL message of {length} bytes is over the limit.")
        return status, self.inner.readAll(length) if length else b""

    def _send(self, status: int, payload: bytes) -> None:
        self.inner.write(_HEADER.pack(status, len(payload)) + payload)
        self.inner.flush()

    def negotiate(self, sign_in: Callable[[str, str], Any]) -> Any:
        """Run the exchange; ``sign_in(user, password)`` returns who signed in or raises
        ``SaslRefused`` with the reason the client is told. Returns what ``sign_in`` did."""
        try:
            status, mechanism = self._receive()
            if status != START:
                raise SaslRefused("The SASL exchange must begin with START.")
            if mechanism.strip().upper() != b"PLAIN":
                raise SaslRefused(
                    f"Unsupported SASL mechanism {mechanism[:40]!r}; this server offers PLAIN."
                )
            status, payload = self._receive()
            if status not in (OK, COMPLETE):
                raise SaslRefused("Expected the PLAIN response after START.")
            user, password = parse_plain(payload)
            who = sign_in(user, password)
        except SaslRefused as exc:
            self._refuse(str(exc))
            raise
        except struct.error:
            self._refuse("Malformed SASL message.")
            raise SaslRefused("Malformed SASL message.") from None
        self._send(COMPLETE, b"")
        return who

    def _refuse(self, reason: str) -> None:
        with contextlib.suppress(OSError, TTransportException):  # the client is gone
            self._send(BAD, reason.encode("utf-8"))

    # --- frames ----------------------------------------------------------------------------

    def isOpen(self) -> bool:
        return bool(self.inner.isOpen())

    def open(self) -> None:
        pass  # accepted sockets are open

    def close(self) -> None:
        self.inner.close()

    def read(self, size: int) -> bytes:
        if not self._read:
            (length,) = _LENGTH.unpack(self.inner.readAll(_LENGTH.size))
            if length > self.max_frame:
                raise TTransportException(
                    TTransportException.SIZE_LIMIT,
                    f"A frame of {length} bytes is over the limit of {self.max_frame}.",
                )
            self._read = memoryview(self.inner.readAll(length))
        chunk, self._read = self._read[:size], self._read[size:]
        return bytes(chunk)

    def write(self, data: bytes) -> None:
        self._write.append(bytes(data))

    def flush(self) -> None:
        data = b"".join(self._write)
        self._write = []
        self.inner.write(_LENGTH.pack(len(data)) + data)
        self.inner.flush()
