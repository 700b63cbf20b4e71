"""The gate of tests/browser/test_editor_first_rows.py, a Python UDF the test's own worker
allows (``TESSERA_UDF_PACKAGES``): ``CREATE TEMPORARY FUNCTION gated AS
'tests.browser.row_gate.gated'``.

Nothing here imports Django: ``gated`` is made inside a function, so Spark's Python workers
get it pickled by value and never import this module.
"""

from __future__ import annotations

from collections.abc import Callable


def _make_gated() -> Callable[[int, int, int], int]:
    def gated(value: int, port: int, gate_from: int) -> int:
        """``value``; row ``gate_from`` once the test's socket on ``port`` closes (one row
        waits: the rows after it are not slowed by a connection each once it is open)."""
        import socket

        if value == gate_from:
            try:
                with socket.create_connection(("127.0.0.1", port)) as waiting:
                    waiting.recv(1)  # returns (or fails) when the test closes its socket
            except OSError:
                pass
        return value

    gated.spark_return_type = "BIGINT"  # type: ignore[attr-defined]  # tessera_udfs.returns
    return gated


gated = _make_gated()
