"""The built front end is sent compressed: ``npm run build`` writes a .gz and a .br beside each
asset (frontend/scripts/precompress.mjs) and WhiteNoise answers with the smallest variant the
client accepts; a client that accepts none gets the file as it is. Read through Django's test
client (the middleware that serves them), from the real build."""

from __future__ import annotations

import gzip
import re
from typing import Any

import pytest
from django.test import Client

from tests.browser.conftest import FRONTEND

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("_frontend_built")]

DIST = FRONTEND / "dist"


def asset(pattern: str) -> tuple[str, bytes]:
    """The URL of the asset index.html names with ``pattern``, and the file's bytes."""
    index = (DIST / "index.html").read_text()
    found = re.search(pattern, index)
    assert found, index
    url = found.group(1)
    return url, (DIST / url.removeprefix("/static/ui/")).read_bytes()


def fetch(url: str, accept: str | None) -> tuple[Any, bytes]:
    headers = {} if accept is None else {"Accept-Encoding": accept}
    response: Any = Client().get(url, headers=headers)
    assert response.status_code == 200, (url, response.status_code)
    return response, b"".join(response.streaming_content)


MAIN_JS = r'<script[^>]+src="(/static/ui/assets/index-[^"]+\.js)"'
MAIN_CSS = r'<link[^>]+href="(/static/ui/assets/index-[^"]+\.css)"'


def test_the_main_bundle_is_sent_gzipped_at_under_40_percent_of_its_size() -> None:
    url, raw = asset(MAIN_JS)
    response, body = fetch(url, "gzip, deflate")
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    assert response["Content-Type"].startswith("text/javascript")
    assert gzip.decompress(body) == raw
    ratio = len(body) / len(raw)
    assert ratio < 0.4, f"{len(raw):,} bytes → {len(body):,} gzipped ({ratio:.0%})"
    # still cached for good: the name holds the content's hash
    assert "immutable" in response["Cache-Control"]


def test_brotli_is_preferred_when_accepted_and_smaller_still() -> None:
    url, raw = asset(MAIN_JS)
    _, gzipped = fetch(url, "gzip")
    response, body = fetch(url, "gzip, deflate, br")
    assert response["Content-Encoding"] == "br"
    assert len(body) < len(gzipped) < len(raw)
    assert body == (DIST / (url.removeprefix("/static/ui/") + ".br")).read_bytes()


def test_the_stylesheet_is_compressed_too() -> None:
    url, raw = asset(MAIN_CSS)
    response, body = fetch(url, "gzip")
    assert response["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == raw and len(body) < len(raw) / 2


@pytest.mark.parametrize("accept", [None, "", "identity", "deflate", "compress"])
def test_a_client_that_accepts_neither_gets_the_file_as_it_is(accept: str | None) -> None:
    url, raw = asset(MAIN_JS)
    response, body = fetch(url, accept)
    assert not response.has_header("Content-Encoding")
    assert body == raw


def test_the_compressed_copies_are_not_served_as_files_of_their_own() -> None:
    """A .gz is a variant of its asset, not a URL that answers gzip bytes as JavaScript."""
    url, _ = asset(MAIN_JS)
    assert (DIST / (url.removeprefix("/static/ui/") + ".gz")).is_file()
    response = Client().get(url + ".gz", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 404 or response["Content-Type"] != "text/javascript"
