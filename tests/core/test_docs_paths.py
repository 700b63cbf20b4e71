"""docs/architecture.md names only files and folders that exist: a path it names in
backticks (``sessions/statements.py``, ``engine/``) is checked against the repository."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
# A backticked span that looks like a repository path: a folder and a name, or a .py file.
PATH_LIKE = re.compile(r"`([A-Za-z0-9_.-]+/[A-Za-z0-9_./*-]*|[A-Za-z0-9_]+\.py)`")


def named_paths(text: str) -> list[str]:
    found = []
    for match in PATH_LIKE.finditer(text):
        path = match.group(1)
        first = path.split("/")[0]
        if path.startswith(("http", "/", "../")) or "*" in path or first.isupper():
            continue
        found.append(path)
    return found


def missing_paths(text: str, root: Path) -> list[str]:
    return sorted({p for p in named_paths(text) if not (root / p).exists()})


def test_every_path_architecture_md_names_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert len(named_paths(text)) > 30  # the check reads the document's paths
    assert missing_paths(text, REPO_ROOT) == []


def test_a_path_that_is_gone_is_found(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "lifecycle.py").write_text("")
    text = "`jobs/lifecycle.py` and `catalog/signals.py`, `jobs/`, `core/x/`, `run.py`"
    assert missing_paths(text, tmp_path) == ["catalog/signals.py", "core/x/", "run.py"]
