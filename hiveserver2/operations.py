"""Operation handles: what a client's ``TOperationHandle`` names, and where its fetch stands.

A statement's operation is its job: the handle's ``guid`` is the job's id and its ``secret``
the session's, and a request is served only when that job is the caller's and ran in that
session (the job row says so; nothing else is trusted). A metadata call's operation is its
answer, kept in this process under a random ``guid`` with its user and session until it is
closed, its session ends on this connection, or the oldest answers make room
(``MAX_KEPT``). Fetch positions (``FETCH_NEXT``) are kept beside them.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hiveserver2.errors import InvalidHandle
from hiveserver2.protocol import ttypes

MAX_KEPT = 10_000


@dataclass
class Answer:
    """A metadata call's result: its columns (name, Spark SQL type) and rows."""

    user_id: int
    session_id: uuid.UUID
    columns: Sequence[tuple[str, str]]
    rows: Sequence[Sequence[Any]]
    kind: int = ttypes.TOperationType.GET_TABLES


@dataclass
class Registry:
    """The answers and fetch positions of this process (one per server)."""

    answers: OrderedDict[uuid.UUID, Answer] = field(default_factory=OrderedDict)
    positions: OrderedDict[uuid.UUID, int] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, answer: Answer) -> uuid.UUID:
        key = uuid.uuid4()
        with self.lock:
            self.answers[key] = answer
            while len(self.answers) > MAX_KEPT:
                self.answers.popitem(last=False)
        return key

    def answer(self, key: uuid.UUID, user_id: int, session_id: uuid.UUID) -> Answer | None:
        """The answer ``key`` if it is this user's in this session; None if there is none
        under that key; ``InvalidHandle`` if it is someone else's."""
        with self.lock:
            found = self.answers.get(key)
        if found is None:
            return None
        if found.user_id != user_id or found.session_id != session_id:
            raise InvalidHandle("Invalid OperationHandle: no such operation in this session.")
        return found

    def position(self, key: uuid.UUID) -> int:
        with self.lock:
            return self.positions.get(key, 0)

    def move(self, key: uuid.UUID, to: int) -> None:
        with self.lock:
            self.positions[key] = to
            self.positions.move_to_end(key)
            while len(self.positions) > MAX_KEPT:
                self.positions.popitem(last=False)

    def forget(self, key: uuid.UUID) -> None:
        with self.lock:
            self.answers.pop(key, None)
            self.positions.pop(key, None)

    def forget_session(self, session_id: uuid.UUID) -> None:
        with self.lock:
            for key in [k for k, a in self.answers.items() if a.session_id == session_id]:
                self.answers.pop(key, None)
                self.positions.pop(key, None)


def handle_of(key: uuid.UUID, session_id: uuid.UUID, kind: int) -> Any:
    return ttypes.TOperationHandle(
        operationId=ttypes.THandleIdentifier(guid=key.bytes, secret=session_id.bytes),
        operationType=kind,
        hasResultSet=True,
    )


def keys_of(handle: Any) -> tuple[uuid.UUID, uuid.UUID]:
    """The (operation, session) ids a client's operation handle names; ``InvalidHandle``
    for anything that is not two 16-byte ids."""
    ident = getattr(handle, "operationId", None)
    guid, secret = getattr(ident, "guid", None), getattr(ident, "secret", None)
    if not isinstance(guid, bytes) or not isinstance(secret, bytes):
        raise InvalidHandle("Invalid OperationHandle.")
    if len(guid) != 16 or len(secret) != 16:
        raise InvalidHandle("Invalid OperationHandle.")
    return uuid.UUID(bytes=guid), uuid.UUID(bytes=secret)


class SharedRegistry(Registry):
    """The registry of the HTTP transport: in a cache every web process shares (successive
    requests of one client land on any of them). Entries live ``TTL_SECONDS``."""

    TTL_SECONDS = 3600

    def __init__(self, cache: Any) -> None:
        super().__init__()
        self.cache = cache

    def keep(self, answer: Answer) -> uuid.UUID:
        key = uuid.uuid4()
        self.cache.set(f"answer:{key}", answer, self.TTL_SECONDS)
        return key

    def answer(self, key: uuid.UUID, user_id: int, session_id: uuid.UUID) -> Answer | None:
        found = self.cache.get(f"answer:{key}")
        if not isinstance(found, Answer):
            return None
        if found.user_id != user_id or found.session_id != session_id:
            raise InvalidHandle("Invalid OperationHandle: no such operation in this session.")
        return found

    def position(self, key: uuid.UUID) -> int:
        return int(self.cache.get(f"position:{key}", 0))

    def move(self, key: uuid.UUID, to: int) -> None:
        self.cache.set(f"position:{key}", to, self.TTL_SECONDS)

    def forget(self, key: uuid.UUID) -> None:
        self.cache.delete_many([f"answer:{key}", f"position:{key}"])

    def forget_session(self, session_id: uuid.UUID) -> None:
        pass  # its answers expire; their handles name a session that no longer exists
