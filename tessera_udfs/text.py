"""Text UDFs."""

from __future__ import annotations

import re
import unicodedata

from tessera_udfs import returns

_NON_WORD = re.compile(r"[^a-z0-9]+")


@returns("STRING")
def slugify(text: str | None) -> str | None:
    """``'Hello, World!'`` → ``'hello-world'``: ASCII letters and digits joined by dashes."""
    if text is None:
        return None
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NON_WORD.sub("-", ascii_text.lower()).strip("-")


@returns("INT")
def word_count(text: str | None) -> int | None:
    """The number of whitespace-separated words."""
    if text is None:
        return None
    return len(text.split())
