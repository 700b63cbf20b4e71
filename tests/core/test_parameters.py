"""Finding ``:name`` markers and matching them with the values sent."""

from __future__ import annotations

import pytest

from core.errors import CoreError
from core.planner.parameters import bind, check_values, marker_names, markers


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT * FROM t WHERE qty > :min_qty", ["min_qty"]),
        ("SELECT :a, :b, :a", ["a", "b"]),
        ("SELECT x::int, ':s', `:q` FROM t -- :c", []),
        ("SELECT /* :c */ 1 WHERE y = : z", ["z"]),
        ("SELECT CAST(NULL AS STRUCT<a:INT, b: MAP<STRING, STRUCT<c:INT>>>), :d", ["d"]),
        ("SELECT * FROM t WHERE x IN (:a, :b) LIMIT :n", ["a", "b", "n"]),
    ],
)
def test_markers_are_read_outside_strings_comments_casts_and_struct_fields(sql, names):
    assert marker_names(sql) == names


def test_markers_carry_their_offsets():
    assert markers("SELECT :a") == [("a", 7)]


def test_bind_matches_markers_and_values():
    assert bind("SELECT :a, :B", {"a": 1, "b": "x"}) == {"a": 1, "B": "x"}
    with pytest.raises(CoreError, match="no value was sent"):
        bind("SELECT :a, :c", {"a": 1})
    with pytest.raises(CoreError, match="no :b marker"):
        bind("SELECT :a", {"a": 1, "b": 2})


def test_values_are_allow_listed():
    assert check_values({"a": None, "b": True, "c": 1, "d": 1.5, "e": "s"}) == {
        "a": None,
        "b": True,
        "c": 1,
        "d": 1.5,
        "e": "s",
    }
    for bad in ({"a": [1]}, {"a": float("nan")}, {"a": 2**64}, {"": 1}, [1]):
        with pytest.raises(CoreError):
            check_values(bad)
