"""A job's failure (``JobError``): built here, and turned into the ``error`` JSON of its row
(and of the REST API) in one place, ``JobError.to_json``, which ``jobs.lifecycle.transition``
calls. Both processes import it (the web process and the workers' ``engine``); it holds no
Django and no Spark."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import CoreError

INTERNAL_ERROR = "INTERNAL_ERROR"
CANCELED = "CANCELED"
WORKER_LOST = "WORKER_LOST"


@dataclass(frozen=True)
class JobError:
    """Why a job failed or was canceled.

    ``details``: None when the error has none (the JSON leaves the key out); an empty
    mapping is shown as ``"details": {}``. ``retryable``: the same statement may succeed if
    run again unchanged (a lost worker, engine or database); it is for the server's own
    decisions and is not part of the JSON."""

    code: str
    message: str
    details: Mapping[str, Any] | None = None
    retryable: bool = False

    @classmethod
    def of(cls, exc: CoreError, *, empty_details: bool = True, retryable: bool = False) -> JobError:
        """The error of a refusal raised as a CoreError (its code, message and details).
        ``empty_details=False``: an error without details leaves the key out, as the
        errors of a job that ran on a worker always have."""
        details = dict(exc.details)
        return cls(
            exc.code,
            exc.message,
            details if details or empty_details else None,
            retryable=retryable,
        )

    @classmethod
    def internal(cls) -> JobError:
        """A bug of ours (logged where it happened): nothing of it is shown."""
        return cls(
            INTERNAL_ERROR,
            "The statement failed because of an internal error; it was logged.",
            {},
        )

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> JobError:
        """The error a ``to_json`` made (``retryable`` is not in it: False)."""
        details = body.get("details")
        return cls(
            str(body["code"]),
            str(body.get("message") or ""),
            dict(details) if isinstance(details, Mapping) else None,
        )

    def to_json(self) -> dict[str, Any]:
        """The form stored in ``Job.error`` and returned by the API."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = dict(self.details)
        return body


class ResultNotReady(CoreError):
    """Asking for the rows of a job that has not finished yet."""

    code = "RESULT_NOT_READY"


class EngineStopped(CoreError):
    """Asking to restart or stop an engine that has stopped already (409)."""

    code = "ENGINE_STOPPED"
