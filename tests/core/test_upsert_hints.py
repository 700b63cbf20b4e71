"""The INSERT hint /*+ OPTIONS('write.mode' = …) */ as the planner reads it from the text
(``core.planner.upserts.read_hint``): only right after the table name, only write.mode."""

from __future__ import annotations

import pytest

from core.errors import CoreError
from core.planner.tokens import tokenize
from core.planner.upserts import read_hint


def hint_of(sql: str, table_end: int = 3) -> str | None:
    tokens = tokenize(sql)
    query = next(i for i, t in enumerate(tokens) if t.is_word("SELECT"))
    return read_hint(sql, tokens, table_end, query).get("write.mode")


def test_the_runtime_mode_in_the_hint() -> None:
    sql = (
        "INSERT INTO t /*+ OPTIONS('write.mode' = 'upsert', "
        "'execution.runtime-mode' = 'Streaming') */ SELECT 1"
    )
    tokens = tokenize(sql)
    assert read_hint(sql, tokens, 3, 9) == {
        "write.mode": "upsert",
        "execution.runtime-mode": "streaming",
    }


def test_the_hint_after_the_table_name() -> None:
    assert hint_of("INSERT INTO t /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1") == "upsert"
    assert hint_of("INSERT INTO t /*+ options('WRITE.MODE'='Append') */ SELECT 1") == "append"
    assert hint_of("INSERT INTO t /* just a comment */ SELECT 1") is None
    # A hint commented out is no hint.
    assert hint_of("INSERT INTO t -- /*+ OPTIONS('write.mode'='upsert') */\nSELECT 1") is None


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("INSERT INTO t /*+ OPTIONS('path' = '/etc') */ SELECT 1", "'path'"),
        ("INSERT INTO t /*+ OPTIONS('write.mode' = 'merge') */ SELECT 1", "append, upsert"),
        (
            "INSERT INTO t /*+ OPTIONS('execution.runtime-mode' = 'fast') */ SELECT 1",
            "'batch' or 'streaming'",
        ),
        ("INSERT INTO t /*+ BROADCAST(t) */ SELECT 1", "only"),
        (
            "INSERT INTO t /*+ OPTIONS('write.mode' = 'upsert', 'write.mode' = 'append') */ "
            "SELECT 1",
            "twice",
        ),
        ("INSERT INTO t /*+ OPTIONS('write.mode' = 'upsert') /* x */ */ SELECT 1", "comment"),
        ("INSERT INTO t /*+ OPTIONS(write.mode = upsert) */ SELECT 1", "quoted"),
        ("INSERT INTO t /*+ OPTIONS('write.mode' = 'upsert') */ /*+ OPTIONS() */ SELECT 1", "once"),
        ("INSERT INTO t (a) /*+ OPTIONS('write.mode' = 'upsert') */ SELECT 1", "right after"),
        ("INSERT INTO t /*+ OPTIONS('write.mode' = '" + "u" * 5000 + "') */ SELECT 1", "long"),
    ],
)
def test_refused_hints(sql: str, words: str) -> None:
    with pytest.raises(CoreError) as raised:
        hint_of(sql)
    assert raised.value.code == "VALIDATION_ERROR"
    assert words in raised.value.message, raised.value.message
