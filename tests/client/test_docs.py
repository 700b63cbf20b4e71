"""docs/python.md stays runnable: its ```python blocks run in order against the live server."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.client.conftest import tessera
from tests.conftest import token_for

pytestmark = [pytest.mark.slow, pytest.mark.spark]

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    """The ```python blocks, each padded with blank lines so that errors name guide lines."""
    text = GUIDE.read_text()
    return [
        "\n" * text.count("\n", 0, match.start(1)) + match.group(1)
        for match in BLOCK.finditer(text)
    ]


def test_the_guide_has_examples():
    assert len(blocks()) >= 8


def test_the_guide_runs(server, monkeypatch):
    monkeypatch.setenv("TESSERA_URL", server)
    monkeypatch.setenv("TESSERA_TOKEN", token_for("alice"))
    namespace: dict[str, object] = {}
    out = io.StringIO()
    ran = 0
    for block in blocks():
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(GUIDE), "exec"), namespace)
        ran += 1
    assert ran == len(blocks())
    text = out.getvalue()
    assert "guide default" in text
    assert "PARSE_ERROR" in text and "FORBIDDEN_SQL" in text and "VALIDATION_ERROR" in text
    assert "[{'id': 1, 'name': 'c'}]" in text and "['+I', '+I']" in text
    assert "statement_set FINISHED" in text
    assert "True False" in text
    assert "inserted 2" in text  # the DB-API example's executemany
    assert isinstance(namespace["t_env"], tessera.TableEnvironment)


def test_the_readme_example_runs(live_server, transactional_db, worker, monkeypatch):
    """README's Python example against the demo of `make run` (admin / admin)."""
    from django.core.management import call_command

    monkeypatch.delenv("TESSERA_ADMIN_USER", raising=False)
    monkeypatch.delenv("TESSERA_ADMIN_PASSWORD", raising=False)
    call_command("bootstrap", stdout=io.StringIO())
    readme = (GUIDE.parents[1] / "README.md").read_text()
    section = readme.split("## Python", 1)[1]
    (example,) = BLOCK.findall(section.split("\n## ", 1)[0])
    example = example.replace("http://127.0.0.1:8000", live_server.url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})
    assert "revenue" in out.getvalue()
