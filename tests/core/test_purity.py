"""core/ must stay pure: standard library only, no Django, no pyspark, none of our apps.

The one exception: the SQL planner (core/planner/) may use sqlglot to parse queries.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CORE_DIR = REPO_ROOT / "core"
PLANNER_DIR = CORE_DIR / "planner"
# Third-party packages allowed under core/planner/ only.
PLANNER_THIRD_PARTY = frozenset({"sqlglot"})

IMPORT_CHECK = (
    "import core.identifiers, core.datatypes, core.schema, core.properties, core.errors, "
    "core.planner, sys; "
    "bad=[m for m in sys.modules if m.split('.')[0] in "
    "('django','pyspark','rest_framework','celery','catalog','jobs','webapp')]; "
    "print(bad); sys.exit(1 if bad else 0)"
)


def test_importing_core_loads_no_framework_modules() -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            # Relative imports stay inside core/.
            found.append((node.lineno, "core" if node.level else node.module or ""))
    return found


def _allowed(path: Path, module: str) -> bool:
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top == "core":
        return True
    return top in PLANNER_THIRD_PARTY and path.is_relative_to(PLANNER_DIR)


def test_core_imports_only_stdlib_and_core() -> None:
    files = sorted(CORE_DIR.rglob("*.py"))
    assert files, f"no modules found under {CORE_DIR}"
    offending = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {module}"
        for path in files
        for line, module in _imported_modules(path)
        if not _allowed(path, module)
    ]
    assert offending == []


def test_sqlglot_is_allowed_only_in_the_planner() -> None:
    planner_module = PLANNER_DIR / "references.py"
    other_module = CORE_DIR / "schema.py"
    assert _allowed(planner_module, "sqlglot.exp")
    assert not _allowed(other_module, "sqlglot")
    assert not _allowed(planner_module, "django.db")


def test_every_core_module_uses_future_annotations() -> None:
    for path in sorted(CORE_DIR.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        futures = [
            alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"
            for alias in node.names
        ]
        assert "annotations" in futures, path
