"""The HiveServer2 binary endpoint: a listening socket and a thread per connection.

Each connection signs in by SASL PLAIN (``hiveserver2.sasl``, ``hiveserver2.auth``) within
``NEGOTIATION_SECONDS``, then its Thrift calls are served by a ``Handler`` bound to the user
who signed in, one call at a time, until the client goes or stays idle past
``TESSERA_HS2_IDLE_SECONDS``. A frame over ``TESSERA_HS2_MAX_FRAME_BYTES``, a string or list
longer than a frame could hold, or a malformed message ends that connection only. Past
``TESSERA_HS2_MAX_CONNECTIONS`` a new connection is closed at once.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from typing import Any

from django.conf import settings
from django.db import connection as db_connection
from thrift.protocol.TProtocol import TProtocolException  # type: ignore[import-untyped]
from thrift.transport.TSocket import TSocket  # type: ignore[import-untyped]
from thrift.transport.TTransport import TTransportException  # type: ignore[import-untyped]

from hiveserver2 import auth
from hiveserver2.handler import Handler
from hiveserver2.operations import Registry
from hiveserver2.protocol import BinaryProtocol, TCLIService
from hiveserver2.sasl import SaslRefused, SaslServerTransport

log = logging.getLogger(__name__)
NEGOTIATION_SECONDS = 10.0
ACCEPT_POLL_SECONDS = 0.5  # how soon a stop is noticed by the accepting thread


class HiveServer2:
    """``serve_forever`` in the calling thread; ``start`` in a daemon thread (tests)."""

    def __init__(
        self,
        host: str | None = None,
        port: int | None = None,
        *,
        max_frame: int | None = None,
        max_connections: int | None = None,
        idle_seconds: float | None = None,
    ) -> None:
        self.host = settings.TESSERA_HS2_BIND if host is None else host
        wanted = settings.TESSERA_HS2_PORT if port is None else port
        self.max_frame = max_frame or settings.TESSERA_HS2_MAX_FRAME_BYTES
        self.idle_seconds = idle_seconds or settings.TESSERA_HS2_IDLE_SECONDS
        limit = max_connections or settings.TESSERA_HS2_MAX_CONNECTIONS
        self._slots = threading.BoundedSemaphore(limit)
        self.registry = Registry()
        self._stopping = threading.Event()
        self._listener = socket.create_server((self.host, wanted), reuse_port=False, backlog=128)
        self.port: int = self._listener.getsockname()[1]

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="hs2-accept", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._listener.close()

    def serve_forever(self) -> None:
        log.info("HiveServer2 listening on %s:%s", self.host, self.port)
        # A signal may be delivered to any thread, and Python runs its handler only when the
        # main thread runs again: accept must return now and then for stop() to take effect.
        self._listener.settimeout(ACCEPT_POLL_SECONDS)
        while not self._stopping.is_set():
            try:
                client, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                log.exception("HiveServer2 accept failed")
                continue
            if not self._slots.acquire(blocking=False):
                log.warning("HiveServer2: %s connections already; closing one more", address)
                client.close()
                continue
            threading.Thread(
                target=self._serve, args=(client, address), name="hs2-conn", daemon=True
            ).start()

    def _serve(self, client: socket.socket, address: Any) -> None:
        peer = str(address[0]) if isinstance(address, tuple) else str(address)
        inner = TSocket()
        inner.setHandle(client)
        transport = SaslServerTransport(inner, self.max_frame)
        try:
            client.settimeout(NEGOTIATION_SECONDS)
            who = transport.negotiate(lambda name, password: auth.sign_in(name, password, peer))
            client.settimeout(self.idle_seconds)
            protocol = BinaryProtocol(
                transport,
                string_length_limit=self.max_frame,
                container_length_limit=self.max_frame,
            )
            processor = TCLIService.Processor(Handler(who, self.registry))
            while not self._stopping.is_set():
                processor.process(protocol, protocol)
        except SaslRefused as exc:
            log.info("HiveServer2 sign-in from %s refused: %s", peer, exc)
        except (TTransportException, TProtocolException, EOFError, OSError, TimeoutError):
            pass  # the client went, idled out, sent a frame over the limit or a malformed one
        except Exception:
            log.exception("HiveServer2 connection from %s failed", peer)
        finally:
            transport.close()
            db_connection.close()
            self._slots.release()
