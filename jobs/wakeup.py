"""Wake-ups between the processes of one machine: Unix datagram sockets in a folder.

The embedded default (SQLite, the file-system broker) has no server that could carry a
notification, so each process that wants to be woken binds one datagram socket in a shared
folder, and a sender writes one small datagram to every socket there. A wake-up is only a
hint: the receiver then reads the truth (a queue folder, a job row). A datagram lost to a
full buffer, or sent while nobody listened, costs at most the receiver's fallback poll.

Used by the broker transport (``jobs.broker``: a message was queued → the worker wakes) and
by job notifications (``jobs.notify``: a job changed → the waiting request wakes). This
module imports neither Django nor kombu.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import secrets
import select
import socket
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

# A Unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS).
MAX_SOCKET_PATH = 100
SUFFIX = ".sock"
MAX_DATAGRAM = 4096


def socket_folder(folder: Path) -> Path:
    """The folder where the sockets of ``folder`` live: ``folder`` itself, or, when its
    paths would be too long for a socket address, a short folder in the temporary directory
    named after it (every process computes the same one)."""
    if len(str(folder)) + 1 + 16 + len(SUFFIX) <= MAX_SOCKET_PATH:
        return folder
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"tessera-wake-{digest}"


def send_all(folder: Path, payload: bytes) -> int:
    """Send ``payload`` to every socket bound in ``folder``; returns how many took it.

    Sockets nobody listens on any more (their process ended) are removed. Never raises for
    a receiver's trouble: a wake-up that cannot be delivered is left to the fallback poll."""
    where = socket_folder(folder)
    try:
        names = os.listdir(where)
    except FileNotFoundError:
        return 0
    sent = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        sender.setblocking(False)
        for name in names:
            if not name.endswith(SUFFIX):
                continue
            path = where / name
            try:
                sender.sendto(payload, str(path))
                sent += 1
            except (ConnectionRefusedError, FileNotFoundError):
                # Nobody bound: a process that ended without removing its socket.
                _unlink(path)
            except BlockingIOError:
                pass  # its buffer is full of wake-ups already: it is awake
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.ENOBUFS):
                    log.debug("wake-up to %s failed: %s", path, exc)
    return sent


class Listener:
    """One bound datagram socket in ``folder``: ``wait`` returns the datagrams received
    within ``timeout`` (an empty list when none came)."""

    def __init__(self, folder: Path) -> None:
        self.folder = socket_folder(folder)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self.path = _bind(self._socket, self.folder)
        except BaseException:
            self._socket.close()
            raise
        self._socket.setblocking(False)
        self.pid = os.getpid()

    def fileno(self) -> int:
        return self._socket.fileno()

    def wait(self, timeout: float | None) -> list[bytes]:
        """Datagrams that arrived, waiting up to ``timeout`` seconds for the first one."""
        readable, _, _ = select.select([self._socket], [], [], timeout)
        if not readable:
            return []
        return self.drain()

    def drain(self) -> list[bytes]:
        """Every datagram already waiting, without blocking."""
        received: list[bytes] = []
        while True:
            try:
                received.append(self._socket.recv(MAX_DATAGRAM))
            except (BlockingIOError, InterruptedError):
                return received

    def close(self) -> None:
        self._socket.close()
        if os.getpid() == self.pid:  # a forked child must not remove its parent's socket
            _unlink(self.path)


def _bind(sock: socket.socket, folder: Path, attempts: int = 5) -> Path:
    """Bind ``sock`` to a new name in ``folder``. The name carries our pid, so a file that
    holds it was left by a dead process whose pid we reuse: it is removed, not a failure."""
    for attempt in range(attempts):
        path = folder / f"{os.getpid():x}-{secrets.token_hex(4)}{SUFFIX}"
        try:
            sock.bind(str(path))
            return path
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or attempt == attempts - 1:
                raise
            if _is_dead(path):
                _unlink(path)
    raise AssertionError("unreachable")


def _is_dead(path: Path) -> bool:
    """Whether nobody receives on the socket file ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return True
        except OSError:
            return False
    return False


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.debug("could not remove %s: %s", path, exc)
