"""Reading a pipeline's arguments: they arrive as strings (``WITH ('k'='v')``), so each
example parses and checks its own, and says in one sentence what is wrong."""

from __future__ import annotations

import datetime
import re

# A table path as the examples accept it: one to three dot-separated parts, each a plain
# identifier or a backquoted one (an inner backquote doubled).
_PART = r"(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)+`)"
_PATH = re.compile(rf"{_PART}(?:\.{_PART}){{0,2}}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_TEXT = 1000


def table_path(name: str, value: object) -> str:
    """A table path argument (``t``, ``d.t`` or ``c.d.t``)."""
    text = str(value).strip() if value is not None else ""
    if not text:
        raise ValueError(f"The argument {name!r} is missing: give a table path such as 'db.t'.")
    if len(text) > MAX_TEXT or not _PATH.fullmatch(text):
        raise ValueError(
            f"The argument {name!r} must be a table path of one to three parts "
            f"(t, db.t or catalog.db.t), not {text[:100]!r}."
        )
    return text


def column_name(name: str, value: object) -> str:
    """A column name argument (a plain identifier)."""
    text = str(value).strip()
    if len(text) > 128 or not _IDENTIFIER.fullmatch(text):
        raise ValueError(
            f"The argument {name!r} must be a column name (letters, digits and _), "
            f"not {text[:100]!r}."
        )
    return text


def positive_int(name: str, value: object, maximum: int) -> int:
    """A whole number from 1 to ``maximum``."""
    text = str(value).strip()
    if not re.fullmatch(r"\d{1,9}", text) or not 1 <= int(text) <= maximum:
        raise ValueError(
            f"The argument {name!r} must be a whole number from 1 to {maximum}, not {text[:100]!r}."
        )
    return int(text)


def optional_date(name: str, value: object) -> datetime.date | None:
    """A date ``YYYY-MM-DD``, or None for an empty value."""
    text = str(value).strip() if value is not None else ""
    if not text:
        return None
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(text)
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"The argument {name!r} must be a date written YYYY-MM-DD, not {text[:100]!r}."
        ) from None
