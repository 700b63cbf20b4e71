"""The client with its ``pandas`` and ``sqlalchemy`` extras at the lowest versions
client/pyproject.toml allows, against the highest (the suite's own environment, pinned by
constraints.txt): the same scenario (tests/client/extras_scenario.py: typed results to
Arrow and pandas, ``from_pandas``, CTAS, SQLAlchemy reflection and ``read_sql``, DB-API with
parameters) run by both interpreters against the live server gives the same values.

The lowest environment is ``make client-lowest`` (a dependency of ``make test``), built from
client/constraints-lowest.txt. The ``spark`` extra is tested at the server's pin only: a
second PySpark is a JVM and 400 MB of download for one conversion path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import PASSWORD
from tests.live_client import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.spark]

LOWEST = ROOT / ".venv" / "share" / "tessera" / "client-lowest" / "bin" / "python"
SCENARIO = Path(__file__).with_name("extras_scenario.py")


def _scenario(python: Path | str, server: str, catalog: str) -> dict[str, Any]:
    env = os.environ | {"PYTHONPATH": str(ROOT / "client" / "src")}
    done = subprocess.run(
        [str(python), str(SCENARIO), server, "alice", PASSWORD, catalog],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{python} failed:\n{done.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _lowest_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "client" / "constraints-lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def test_the_lowest_and_highest_versions_give_the_same_values(server: str) -> None:
    assert LOWEST.exists(), f"{LOWEST} is missing: run `make client-lowest` (make test does)"
    lowest = _scenario(LOWEST, server, "low")
    highest = _scenario(sys.executable, server, "high")

    pins = _lowest_pins()
    assert lowest["versions"] == {
        "pandas": pins["pandas"],
        "pyarrow": pins["pyarrow"],
        "sqlalchemy": pins["sqlalchemy"],
    }
    assert highest["versions"]["pandas"] != pins["pandas"]
    assert lowest.pop("versions") != highest.pop("versions")

    # What the values are, not only that they agree.
    row = highest["arrow_rows"][0]
    assert row["d"] == "1.25" and row["ntz"] == "2024-01-01T10:00:00"
    assert row["old"] == "1900-01-01" and row["far"] == "2100-06-01"
    assert row["m"] == {"a": 1, "b": 2} and row["a"] == [1, 2]
    assert row["s"] == {"x": 1, "y": "s"} and row["b"] == "cafe"
    assert row["n"] is None and row["t"] == "é"
    assert highest["pandas_value_types"]["m"] == "dict"
    assert highest["pandas_value_types"]["ntz"] == "Timestamp"
    assert [r["id"] for r in highest["from_pandas"]] == [1, 2, None]
    assert highest["sqlalchemy_tables"] == ["kept"]
    assert highest["dbapi_rows"] == [[2, "2.25"]]
    # Spark's nullability at every depth, a NOT NULL field inside a NULL struct too.
    assert highest["nullability"] == [
        ["id", False],
        ["ns", True, ["x", False]],
        ["a", False, ["element", False]],
        ["m", False, ["key", False], ["value", False]],
    ]
    assert highest["nullability_rows"] is None
    assert highest["nullable_columns"] == [False, True, False, False]

    for key in highest:
        assert lowest[key] == highest[key], key
