"""The embedded broker: kombu's file-system transport, woken instead of polled, with whole
messages, a dead-letter folder and re-delivery of a dead consumer's messages.

Kombu's file-system transport (the embedded default: one folder shared by the web and the
worker) has no way to wait for a message: the worker lists the folder, finds nothing and
sleeps ``polling_interval`` (1 s), so every statement waited up to 1 s before a worker saw it
(docs/benchmarks.md, "Interactive latency"). This transport is the same transport, with
these changes:

- after a message file is in place, the sender sends a one-byte datagram to the sockets of
  the consumers (``jobs.wakeup``, folder ``wake_folder`` of the transport options); a
  consumer waits on its own socket instead of sleeping, so it reads the folder again as
  soon as a message arrives; it still reads it every ``polling_interval`` without one. The
  socket is bound again after a reconnection, a fork, or when its file was removed;
- a message is written whole under a hidden temporary name (``.<name>.part``, which no
  queue's pattern ``*.<queue>.msg`` matches) and renamed into place: a reader never sees a
  message being written. Kombu's own ``_put`` creates the file, then locks and writes it,
  and its ``_get`` read such a file empty;
- a reader takes a message by renaming it into its own claim folder (``claimed_folder``,
  default ``<data_folder_in>/../claimed/<pid>-<token>``; one rename: of two consumers, one
  wins and the other goes on to the next file), and removes it when the message is
  acknowledged, rejected or restored. A consumer holds a POSIX lock on its claim folder
  while it lives; any other consumer that can take that lock knows its owner is dead and
  renames the messages back into the queue folder (``recover_claims``). Kombu's reader
  deletes the file when it reads it, so a worker killed before it acknowledged a message
  lost it until the job sweeper sent the job again (15 to 20 s later);
- a message that cannot be decoded (empty, truncated, not kombu's JSON) is moved to
  ``dead_letter_folder`` (default ``<data_folder_in>/../dead-letter``) with a warning, and
  reading goes on: it is never an exception in the worker's loop. A zero-length file younger
  than ``EMPTY_GRACE_SECONDS`` is left alone: an older kombu may still be writing it, and a
  file it writes is locked (``flock``) until whole, which the reader waits for.

Messages are read oldest first by the milliseconds their name starts with, as a number;
``store_processed`` keeps an acknowledged message in ``processed_folder``, as in kombu.
The message files need no ``fsync``: the job row (in the database) is the truth, and the
sweeper re-sends a job whose message a machine crash lost or left torn (``fsync_messages``
turns it on). Selected by ``CELERY_BROKER_TRANSPORT`` in ``webapp.settings`` when the broker
URL is ``filesystem://``. Imports neither Django nor pyspark.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import secrets
import shutil
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from time import monotonic, sleep
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

from jobs import wakeup

log = logging.getLogger(__name__)

# kombu is untyped: its JSON and encoding helpers, typed once.
_loads: Callable[[str], Any] = loads
_dumps: Callable[[Any], str] = dumps
_bytes_to_str: Callable[[bytes], str] = bytes_to_str
_str_to_bytes: Callable[[str], bytes] = str_to_bytes


WAKE_FOLDER_OPTION = "wake_folder"
DEAD_LETTER_OPTION = "dead_letter_folder"
CLAIMED_OPTION = "claimed_folder"
FSYNC_OPTION = "fsync_messages"
# A temporary name starts with a dot and ends in ``.part``: kombu matches
# ``name.partition('.')[2] == '<queue>.msg'``, which no such name can equal.
TEMP_PREFIX = "."
TEMP_SUFFIX = ".part"
OWNER_LOCK = ".owner"
# An older kombu creates a message file before it locks and writes it: a file that is
# empty for longer than this is not being written any more.
EMPTY_GRACE_SECONDS = 5.0
# How often a consumer looks for the claim folders of dead consumers (one listdir).
RECOVER_EVERY_SECONDS = 1.0


def wake_folder(transport_options: dict[str, Any]) -> Path | None:
    folder = transport_options.get(WAKE_FOLDER_OPTION)
    return Path(folder) if folder else None


def claimed_root(transport_options: dict[str, Any]) -> Path:
    folder = transport_options.get(CLAIMED_OPTION)
    if folder:
        return Path(folder)
    return Path(transport_options.get("data_folder_in", "data_in")).parent / "claimed"


def dead_letter_folder(transport_options: dict[str, Any]) -> Path:
    folder = transport_options.get(DEAD_LETTER_OPTION)
    if folder:
        return Path(folder)
    return Path(transport_options.get("data_folder_in", "data_in")).parent / "dead-letter"


def write_message(folder: Path, name: str, data: bytes, fsync: bool = False) -> Path:
    """Write ``data`` as ``folder/name`` so that it appears whole or not at all."""
    target = folder / name
    temp = folder / f"{TEMP_PREFIX}{name}{TEMP_SUFFIX}"
    try:
        with open(temp, "xb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temp, target)
        if fsync:
            _fsync_folder(folder)
    except OSError as exc:
        _unlink(temp)
        raise ChannelError(f"Cannot add file {str(target)!r} to directory") from exc
    return target


def decode(data: bytes) -> dict[str, Any]:
    """A message file's payload; ValueError when it is not a kombu message."""
    payload = _loads(_bytes_to_str(data))
    if not isinstance(payload, dict) or not isinstance(payload.get("properties"), dict):
        raise ValueError("not a kombu message (no properties)")
    if "delivery_tag" not in payload["properties"]:
        raise ValueError("not a kombu message (no delivery tag)")
    return payload


def recover_claims(root: Path, queue_folder: Path) -> int:
    """Move the messages of every dead consumer's claim folder under ``root`` back into
    ``queue_folder``; returns how many. A consumer is dead when its owner lock is free."""
    try:
        entries = os.listdir(root)
    except FileNotFoundError:
        return 0
    own = f"{os.getpid()}-"
    moved = 0
    for entry in entries:
        # A dot: one being created. Our own pid: POSIX locks never conflict within a process,
        # and closing a second descriptor of our lock file would drop our lock.
        if entry.startswith(".") or entry.startswith(own):
            continue
        folder = root / entry
        try:
            fd = os.open(folder / OWNER_LOCK, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # its owner or another recoverer is removing it
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # alive
            count = 0
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                names = []
            for name in names:
                if name == OWNER_LOCK:
                    continue
                try:
                    os.replace(folder / name, queue_folder / name)
                    count += 1
                except FileNotFoundError:
                    pass
            if count:
                log.warning(
                    "re-queued %d unacknowledged messages of a consumer that ended (%s)",
                    count,
                    folder,
                )
            moved += count
            _unlink(folder / OWNER_LOCK)
            _rmdir(folder)
        finally:
            os.close(fd)
    return moved


class _Claims:
    """This channel's claim folder, locked for as long as the channel lives."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.pid = os.getpid()
        name = f"{self.pid}-{secrets.token_hex(6)}"
        # Created and locked under a hidden name, then renamed: a recoverer never sees it
        # unlocked.
        staging = root / f".{name}"
        staging.mkdir(mode=0o700)
        self.fd = os.open(staging / OWNER_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.folder = root / name
        os.rename(staging, self.folder)

    def release(self, queue_folder: Path) -> None:
        """Put back what is still claimed (neither acknowledged nor restored), then go."""
        if os.getpid() != self.pid:
            return  # a forked child: the folder and its lock are its parent's
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            names = []
        for name in names:
            if name != OWNER_LOCK:
                try:
                    os.replace(self.folder / name, queue_folder / name)
                except OSError as exc:
                    log.warning("could not re-queue %s: %s", self.folder / name, exc)
        _unlink(self.folder / OWNER_LOCK)
        _rmdir(self.folder)
        os.close(self.fd)


class Channel(filesystem.Channel):
    _claims: _Claims | None = None
    _recovered_at = float("-inf")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # delivery tag → the claimed file, removed on ack, reject or restore
        self._claimed: dict[str, Path] = {}
        self._no_ack_queues: set[str] = set()
        self._listed: dict[str, deque[str]] = {}
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        fsync = bool(self.transport_options.get(FSYNC_OPTION, False))
        write_message(Path(self.data_folder_out), name, _str_to_bytes(_dumps(payload)), fsync)
        folder = wake_folder(self.transport_options)
        if folder is not None:
            wakeup.send_all(folder, b"q")

    def _get(self, queue: str) -> Any:  # type: ignore[override]
        self._recover_dead_consumers()
        folder = Path(self.data_folder_in)
        names = self._listed.get(queue)
        if not names:
            # One listing serves until it is used up: listing a folder of n messages for each
            # of them would cost n² under a backlog. Newer messages sort after it anyway.
            queue_find = f"{queue}.msg"
            found = [n for n in os.listdir(folder) if n.partition(".")[2] == queue_find]
            found.sort(key=_sent_order)
            names = self._listed[queue] = deque(found)
        while names:
            name = names.popleft()
            source = folder / name
            try:
                stat = source.stat()
            except FileNotFoundError:
                continue  # another consumer took it
            if stat.st_size == 0 and time.time() - stat.st_mtime < EMPTY_GRACE_SECONDS:
                continue  # an older kombu may be between creating and writing it
            claimed = self._claim_folder() / name
            try:
                os.rename(source, claimed)
            except FileNotFoundError:
                continue  # another consumer took it first
            except OSError as exc:  # e.g. the claim folder on another file system
                raise ChannelError(f"Cannot claim {str(source)!r}: {exc}") from exc
            payload = self._read(claimed, source)
            if payload is None:
                continue
            tag = str(payload["properties"]["delivery_tag"])
            if queue in self._no_ack_queues:
                _unlink(claimed)  # nobody will acknowledge it
            else:
                self._claimed[tag] = claimed
            return payload
        raise Empty()

    def _read(self, claimed: Path, source: Path) -> dict[str, Any] | None:
        """The claimed file's message, or None when it went to the dead-letter folder."""
        try:
            with open(claimed, "rb") as f:
                # An older kombu holds an exclusive flock while it writes: wait for it.
                fcntl.flock(f.fileno(), fcntl.LOCK_SH)
                data = f.read()
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        except OSError as exc:
            raise ChannelError(f"Cannot read file {str(claimed)!r} from queue.") from exc
        try:
            return decode(data)
        except ValueError as exc:  # json's and UnicodeDecodeError are ValueErrors
            self._dead_letter(claimed, source, f"{type(exc).__name__}: {exc}", len(data))
            return None

    def _dead_letter(self, claimed: Path, source: Path, reason: str, size: int) -> None:
        folder = dead_letter_folder(self.transport_options)
        target = folder / claimed.name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.move(claimed, target)
        except OSError as exc:
            log.warning("could not move %s to %s (%s): dropped it", claimed, folder, exc)
            _unlink(claimed)
            target = claimed
        log.warning(
            "undecodable message %s (%d bytes, %s) moved to %s", source, size, reason, target
        )

    def _claim_folder(self) -> Path:
        if self._claims is None or self._claims.pid != os.getpid():
            self._claims = _Claims(claimed_root(self.transport_options))
        return self._claims.folder

    def _recover_dead_consumers(self) -> None:
        now = monotonic()
        if now - self._recovered_at < RECOVER_EVERY_SECONDS:
            return
        self._recovered_at = now
        root = claimed_root(self.transport_options)
        if recover_claims(root, Path(self.data_folder_in)):
            folder = wake_folder(self.transport_options)
            if folder is not None:
                wakeup.send_all(folder, b"q")

    def _forget(self, delivery_tag: Any, processed: bool = False) -> None:
        claimed = self._claimed.pop(str(delivery_tag), None)
        if claimed is None:
            return
        if processed and self.store_processed:  # kombu's option: keep what was handled
            try:
                shutil.move(claimed, Path(self.processed_folder) / claimed.name)
                return
            except OSError as exc:
                log.warning("could not keep %s in %s: %s", claimed, self.processed_folder, exc)
        _unlink(claimed)

    def basic_consume(self, queue: str, no_ack: bool, *args: Any, **kwargs: Any) -> Any:
        if no_ack:
            self._no_ack_queues.add(queue)
        return super().basic_consume(queue, no_ack, *args, **kwargs)  # type: ignore[no-untyped-call]

    def basic_get(self, queue: str, no_ack: bool = False, **kwargs: Any) -> Any:
        message = super().basic_get(queue, no_ack, **kwargs)  # type: ignore[no-untyped-call]
        if no_ack and message is not None:
            self._forget(message.delivery_tag)
        return message

    def basic_ack(self, delivery_tag: Any, multiple: bool = False) -> None:
        super().basic_ack(delivery_tag, multiple)  # type: ignore[no-untyped-call]
        self._forget(delivery_tag, processed=True)

    def basic_reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        super().basic_reject(delivery_tag, requeue)  # type: ignore[no-untyped-call]
        self._forget(delivery_tag)

    def _restore(self, message: Any) -> None:
        # Put again first, then forget: a crash in between is a duplicate, never a loss.
        super()._restore(message)  # type: ignore[no-untyped-call]
        self._forget(message.delivery_tag)

    def close(self) -> None:
        claims, self._claims = self._claims, None
        options = self.transport_options if self.connection is not None else {}
        super().close()  # type: ignore[no-untyped-call]
        if claims is not None and options:
            claims.release(Path(options.get("data_folder_in", "data_in")))
            folder = wake_folder(options)
            if folder is not None:
                wakeup.send_all(folder, b"q")


class Transport(filesystem.Transport):
    """``filesystem.Transport`` whose consumers wait on a wake-up socket."""

    Channel = Channel
    driver_name = "filesystem"
    _listener: wakeup.Listener | None = None

    def _wake_listener(self) -> wakeup.Listener | None:
        listener = self._listener
        if listener is not None and (listener.pid != os.getpid() or not listener.path.exists()):
            # A forked child, or its socket file was removed: nobody could wake it.
            listener.close()
            listener = self._listener = None
        if listener is None:
            client: Any = self.client
            folder = wake_folder(client.transport_options)
            if folder is None:
                return None
            listener = self._listener = wakeup.Listener(folder)
        return listener

    def drain_events(  # type: ignore[override]
        self, connection: Any, timeout: float | None = None
    ) -> None:
        """kombu's ``virtual.Transport.drain_events``, waiting on the wake-up socket where
        it would sleep."""
        time_start = monotonic()
        self._wake_listener()  # bound before the first look: no wake-up is missed
        cycle: Any = self.cycle
        get = cycle.get
        polling_interval = self.polling_interval
        if timeout and polling_interval and polling_interval > timeout:
            polling_interval = timeout
        while True:
            try:
                get(self._deliver, timeout=timeout)
            except Empty:
                if timeout is not None and monotonic() - time_start >= timeout:
                    raise TimeoutError() from None
                listener = self._wake_listener()
                if listener is not None:
                    left = None if timeout is None else time_start + timeout - monotonic()
                    if polling_interval is not None:
                        left = polling_interval if left is None else min(left, polling_interval)
                    listener.wait(None if left is None else max(0.0, left))
                elif polling_interval is not None:
                    sleep(polling_interval)
            else:
                break

    def close_connection(self, connection: Any) -> None:
        super().close_connection(connection)  # type: ignore[no-untyped-call]
        if self._listener is not None:
            self._listener.close()
            self._listener = None


def _sent_order(name: str) -> tuple[int, str]:
    """Oldest first: by the milliseconds the name starts with, as a number (as strings,
    "999_…" would come after "1000_…")."""
    head = name.partition("_")[0]
    return (int(head) if head.isdigit() else 0, name)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.debug("could not remove %s: %s", path, exc)


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY):
            log.debug("could not remove %s: %s", path, exc)
