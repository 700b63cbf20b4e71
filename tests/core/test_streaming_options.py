"""Structured Streaming's file-source options on the table-option allow-list
(``core/options.py``): only ``maxFilesPerTrigger``, in range; the options that delete or
move a source's files stay refused."""

from __future__ import annotations

import pytest

from core.errors import CoreError
from core.options import check_options, refused_key


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "orc", "text"])
def test_files_per_trigger_is_an_option_of_every_file_format(fmt: str) -> None:
    assert check_options(fmt, {"maxFilesPerTrigger": "4"}) == {"maxFilesPerTrigger": "4"}
    assert check_options(fmt, {"MAXFILESPERTRIGGER": "100000"}) == {"MAXFILESPERTRIGGER": "100000"}


@pytest.mark.parametrize("value", ["0", "-1", "100001", "2147483647", "four", "", "1.5"])
def test_files_per_trigger_out_of_range_is_refused(value: str) -> None:
    with pytest.raises(CoreError, match="maxFilesPerTrigger"):
        check_options("parquet", {"maxFilesPerTrigger": value})


@pytest.mark.parametrize(
    "key", ["cleanSource", "CLEANSOURCE", "sourceArchiveDir", "latestFirst", "maxFileAge"]
)
def test_other_streaming_file_options_are_refused(key: str) -> None:
    assert refused_key(key) is not None
    with pytest.raises(CoreError, match=key):
        check_options("parquet", {key: "delete"})
