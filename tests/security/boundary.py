"""Helpers of the storage-boundary and write-right tests: users with a SQL session, where
files are (a storage root, a directory outside every root holding a secret), and what must
be true after a refusal (nothing read, nothing written)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings

from catalog.models import Table
from jobs.models import Job, TemporaryObject
from tests.conftest import API, assert_error
from tests.worker_helpers import Pipeline

SECRET = "TOP-SECRET-"  # every secret file's content starts with this


def uid() -> str:
    return uuid.uuid4().hex[:10]


# One user with an API client and a SQL session: the worker tests' ``Pipeline`` (the
# fixture ``alice_sql`` is one).
Actor = Pipeline


def refused(actor: Actor, job: dict[str, Any], code: str, *fragments: str) -> dict[str, Any]:
    """The job failed with ``code`` and a message holding every fragment, returned no
    result and leaked no secret in its message."""
    assert job["status"] == "FAILED", job
    error = job["error"]
    assert error["code"] == code, error
    for fragment in fragments:
        assert fragment in error["message"], (fragment, error["message"])
    assert SECRET not in str(error)
    assert_error(actor.api.get(f"{API}/jobs/{job['id']}/result"), 404, "NOT_FOUND")
    return dict(error)


def error_of(job: Job) -> dict[str, Any]:
    """A failed job row's error object."""
    assert job.error is not None, job.status
    return dict(job.error)


def storage_root() -> Path:
    root = Path(settings.TESSERA_STORAGE_ROOTS[0])
    root.mkdir(parents=True, exist_ok=True)
    return root


def outside_dir() -> Path:
    """A directory outside every storage root (a sibling of the root, in the data dir),
    holding a secret csv file and a secret text file."""
    path = Path(settings.DATA_DIR) / f"outside-{uid()}"
    path.mkdir()
    (path / "secret.csv").write_text(f"{SECRET}{path.name},1\n")
    (path / "secret.txt").write_text(f"{SECRET}{path.name}\n")
    return path


def table_dir(name: str = "t") -> Path:
    """A new directory under the storage root holding one csv file (`id`, `name`)."""
    path = storage_root() / f"{name}-{uid()}"
    path.mkdir()
    (path / "part-00000.csv").write_text("1,alpha\n2,beta\n")
    return path


def files_under(path: Path) -> set[str]:
    """Every file, directory and link under ``path`` (hidden ones too), relative to it."""
    if not path.exists():
        return set()
    found: set[str] = set()
    for directory, subdirs, files in os.walk(path):
        for name in [*subdirs, *files]:
            found.add(str((Path(directory) / name).relative_to(path)))
    return found


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal: what is stored is exactly ``text``."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def no_table(catalog: str, name: str) -> None:
    assert not Table.objects.filter(database__catalog__name=catalog, name_key=name.lower()).exists()


def no_temporary_objects(actor: Actor) -> None:
    assert not TemporaryObject.objects.filter(session_id=actor.session_id).exists()
