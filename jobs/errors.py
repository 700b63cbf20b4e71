"""How a failure becomes a job's ``error`` JSON, and the errors of the jobs API's own."""

from __future__ import annotations

from typing import Any

from core.errors import CoreError


def error_json(exc: CoreError) -> dict[str, Any]:
    """A CoreError as a job's ``error``."""
    return {"code": exc.code, "message": exc.message, "details": dict(exc.details)}


INTERNAL_ERROR = {
    "code": "INTERNAL_ERROR",
    "message": "The statement failed because of an internal error; it was logged.",
    "details": {},
}


class ResultNotReady(CoreError):
    """Asking for the rows of a job that has not finished yet."""

    code = "RESULT_NOT_READY"
