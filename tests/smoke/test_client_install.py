"""The Python client installs on its own: ``pip install ./client`` in a new virtualenv (no
Django, no pyspark), typed (``py.typed``), and importing it pulls in neither."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_client_in_a_clean_virtualenv(tmp_path: Path) -> None:
    # A copy: pip builds in the source tree, and the repository's stays as it is.
    source = tmp_path / "client"
    shutil.copytree(ROOT / "client", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            "-c",
            str(ROOT / "constraints.txt"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    code = (
        "import sys, pathlib, tessera;"
        "print(tessera.__name__, tessera.connect.__name__);"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'pyspark', 'py4j'));"
        "assert not bad, bad;"
        "assert (pathlib.Path(tessera.__file__).parent / 'py.typed').exists()"
    )
    # Run outside the repository, so that the installed copy is the one imported.
    ran = subprocess.run(
        [str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "tessera connect" in ran.stdout
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.lower()
    assert "tessera-client==0.1.0" in listed
    assert "django" not in listed and "pyspark" not in listed
