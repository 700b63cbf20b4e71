"""Prepared statements of the Flight SQL endpoint: the text, and the values a client bound
(DoPut of a ``CommandPreparedStatementQuery``), kept in this process under a random handle
that only the user and session that prepared it may use.

Values bind by name to the statement's ``:name`` markers, as the REST API's ``parameters``
do (bound by Spark, never spliced): the columns of the bound batch are the names (ADBC:
``cursor.execute(sql, {"name": value})``). One set of values per execution: a batch of more
than one row (``executemany``) is refused.
"""

from __future__ import annotations

import secrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.flight as flight  # type: ignore[import-untyped]
from django.contrib.auth.models import User

from jobs.models import Session

MAX_PREPARED = 10_000
MAX_PARAMETERS = 1000


@dataclass
class Statement:
    user_id: int
    session_id: uuid.UUID
    query: str
    parameters: dict[str, Any] | None = None


class Prepared:
    """The prepared statements of this process; the oldest go past ``MAX_PREPARED``."""

    def __init__(self) -> None:
        self._kept: OrderedDict[bytes, Statement] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, query: str, user: User, session: Session) -> bytes:
        handle = secrets.token_bytes(16)
        with self._lock:
            self._kept[handle] = Statement(user.pk, session.pk, query)
            while len(self._kept) > MAX_PREPARED:
                self._kept.popitem(last=False)
        return handle

    def get(self, handle: bytes, user: User, session: Session) -> Statement:
        with self._lock:
            found = self._kept.get(handle)
        if found is None or (found.user_id, found.session_id) != (user.pk, session.pk):
            raise flight.FlightUnauthorizedError(
                "[INVALID_HANDLE] No such prepared statement in this sign-in's session."
            )
        return found

    def forget(self, handle: bytes, user: User, session: Session) -> None:
        self.get(handle, user, session)
        with self._lock:
            self._kept.pop(handle, None)

    def forget_session(self, session_id: uuid.UUID) -> None:
        """Forget the prepared statements of a session that was closed."""
        with self._lock:
            for handle in [h for h, s in self._kept.items() if s.session_id == session_id]:
                del self._kept[handle]


def parameters_of(reader: Any) -> dict[str, Any]:
    """The values of the one row a client bound, by column name."""
    table = reader.read_all()
    if table.num_columns > MAX_PARAMETERS:
        raise pa.ArrowInvalid(f"[VALIDATION_ERROR] More than {MAX_PARAMETERS} parameters.")
    if table.num_rows != 1:
        raise pa.ArrowInvalid(
            "[VALIDATION_ERROR] Bind exactly one row of parameter values per execution "
            f"(got {table.num_rows})."
        )
    return {name: table.column(name)[0].as_py() for name in table.column_names}
