"""gunicorn settings shared by `make run` and the Docker image (`-c python:webapp.gunicorn_conf`).

The app is loaded once in the master; `gc.freeze()` then moves everything loaded so far
out of the garbage collector's reach, so workers neither copy those pages on write nor
spend 80 to 140 ms walking them in full collections (measured: docs/benchmarks.md).
"""

from __future__ import annotations

import gc
from typing import Any

preload_app = True


def when_ready(server: Any) -> None:
    gc.freeze()
