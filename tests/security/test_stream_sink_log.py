"""The committer of a streaming append links only what Spark's file sink logged inside the
job's own sink directory (engine/stream_files.py, docs/streaming.md): its log is
read as data, and every file it names is checked the way it will be linked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.errors import CoreError
from core.locations import LocationRefused
from engine.stream_files import LOG_DIR, SinkLogError, batch_files


def write_log(
    sink: Path, batch_id: int, entries: list[dict[str, object]], head: str = "v1"
) -> None:
    folder = sink / LOG_DIR
    folder.mkdir(parents=True, exist_ok=True)
    lines = [head, *(json.dumps(entry) for entry in entries)]
    (folder / str(batch_id)).write_text("\n".join(lines) + "\n", encoding="utf-8")


def entry(path: Path | str, **extra: object) -> dict[str, object]:
    uri = path if isinstance(path, str) else path.as_uri()
    return {"path": uri, "size": 1, "isDir": False, "action": "add", **extra}


@pytest.fixture
def sink(tmp_path: Path) -> Path:
    folder = (tmp_path / "sink").resolve()
    folder.mkdir()
    return folder


def test_the_files_of_a_logged_batch(sink: Path) -> None:
    (sink / "part-0.parquet").write_bytes(b"x")
    (sink / "k=a b").mkdir()
    (sink / "k=a b" / "part-1.parquet").write_bytes(b"x")
    # Spark writes "file:/…" URIs, percent-encoded (a space in a partition value).
    write_log(
        sink,
        0,
        [
            entry(f"file:{sink}/part-0.parquet"),
            entry(sink / "k=a b" / "part-1.parquet"),
            entry(f"file:{sink}/gone.parquet", action="delete"),
        ],
    )
    assert batch_files(sink, 0) == [Path("k=a b/part-1.parquet"), Path("part-0.parquet")]
    write_log(sink, 1, [])  # a batch that wrote nothing
    assert batch_files(sink, 1) == []
    assert batch_files(sink, 2) is None  # not logged yet


@pytest.mark.parametrize(
    "name",
    [
        "outside",  # a file next to the sink
        "dotdot",  # a path climbing out of it
        "link",  # a link inside the sink to a file outside
        "hidden",  # a hidden or underscore file (not data for Spark's readers)
        "log",  # the sink's own log
        "remote",  # another file system
        "directory",
    ],
)
def test_a_log_naming_anything_else_is_refused(sink: Path, name: str) -> None:
    outside = sink.parent / "secret.parquet"
    outside.write_bytes(b"secret")
    (sink / ".part-0.parquet.crc").write_bytes(b"x")
    (sink / "dir").mkdir()
    os.symlink(outside, sink / "part-link.parquet")
    write_log(sink, 5, [])
    uri = {
        "outside": outside.as_uri(),
        "dotdot": f"file:{sink}/../secret.parquet",
        "link": (sink / "part-link.parquet").as_uri(),
        "hidden": (sink / ".part-0.parquet.crc").as_uri(),
        "log": (sink / LOG_DIR / "5").as_uri(),
        "remote": f"hdfs://namenode{sink}/part-0.parquet",
        "directory": (sink / "dir").as_uri(),
    }[name]
    write_log(sink, 0, [entry(uri)])
    with pytest.raises(LocationRefused) as refused:
        batch_files(sink, 0)
    assert "sink log names" in refused.value.message


@pytest.mark.parametrize(
    ("head", "line"),
    [("v2", None), ("v1", "{not json"), ("v1", '{"size": 1}')],
)
def test_a_log_tessera_cannot_read_is_an_error(sink: Path, head: str, line: str | None) -> None:
    folder = sink / LOG_DIR
    folder.mkdir()
    (folder / "0").write_text("\n".join([head, *([line] if line else [])]), encoding="utf-8")
    with pytest.raises(SinkLogError):
        batch_files(sink, 0)


def test_a_compacted_log_is_an_error_not_an_empty_batch(sink: Path) -> None:
    write_log(sink, 9, [])
    (sink / LOG_DIR / "9").rename(sink / LOG_DIR / "9.compact")
    with pytest.raises(SinkLogError) as raised:
        batch_files(sink, 9)
    assert "compacted" in raised.value.message


def test_a_huge_or_linked_log_file_is_refused(sink: Path, tmp_path: Path) -> None:
    folder = sink / LOG_DIR
    folder.mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("v1\n", encoding="utf-8")
    os.symlink(target, folder / "0")
    with pytest.raises(CoreError):
        batch_files(sink, 0)
    with open(folder / "1", "wb") as huge:
        huge.truncate(17 * 1024 * 1024)
    with pytest.raises(SinkLogError):
        batch_files(sink, 1)
