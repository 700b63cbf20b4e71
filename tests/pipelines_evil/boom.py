"""Importing this module writes ``<TESSERA_DATA_DIR>/pipelines_evil_imported``: the tests
prove the allow-list refuses it before any import."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

MARKER = Path(os.environ.get("TESSERA_DATA_DIR", "/tmp")) / "pipelines_evil_imported"
MARKER.write_text("imported")


def run(t_env: Any) -> None:
    MARKER.write_text("ran")
