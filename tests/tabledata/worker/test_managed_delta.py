"""Managed Delta tables (issue 31, ADR 0019): ``CREATE TABLE … USING delta`` without
LOCATION, CTAS, INSERT INTO and INSERT OVERWRITE through the worker; the table's versions are
Delta's, recorded in Tessera's database at FINISHED; an independent Delta reader (delta-rs,
no Spark) reads the table's directory at every version with the rows Tessera's
``VERSION AS OF`` returns. Hostile: a failed or canceled job leaves the table (and its log)
at its previous version; another user without MODIFY writes nothing; forged options and
plans cannot move a managed Delta table's files out of its directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from deltalake import DeltaTable, QueryBuilder

from catalog.models import Table, TableVersion

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker"),
]


def _row(catalog: str, name: str) -> Table:
    return Table.objects.get(database__catalog__name=catalog, name_key=name)


def _versions(catalog: str, name: str) -> list[int]:
    return sorted(
        TableVersion.objects.filter(table=_row(catalog, name)).values_list("version", flat=True)
    )


def _delta_rows(path: str, version: int) -> list[list[Any]]:
    """delta-rs's rows at ``version``: its DataFusion reader (its pyarrow reader refuses
    the column mapping and deletion vectors reader features)."""
    builder = QueryBuilder().register("t", DeltaTable(path, version=version))
    data = pa.table(builder.execute("SELECT id, name FROM t ORDER BY id").read_all())
    return [list(r.values()) for r in data.to_pylist()]


def test_ctas_insert_overwrite_are_delta_versions_delta_rs_reads(alice_sql, catalog) -> None:
    t = f"{catalog}.d.ev"
    alice_sql.ok(
        f"CREATE TABLE {t} USING delta AS SELECT id, concat('n', id) AS name FROM range(3)"
    )
    alice_sql.ok(f"INSERT INTO {t} VALUES (10, 'x'), (11, 'y')")
    alice_sql.ok(f"INSERT OVERWRITE {t} SELECT 7, 'z'")
    row = _row(catalog, "ev")
    path = row.location
    assert row.options.get("format") == "delta"
    assert Path(path, "_delta_log").is_dir()
    versions = _versions(catalog, "ev")
    assert versions == list(range(DeltaTable(path).version() + 1)), versions
    for version in versions:
        ours = alice_sql.rows(f"SELECT id, name FROM {t} VERSION AS OF {version} ORDER BY id")
        assert ours == _delta_rows(path, version), version
    assert alice_sql.rows(f"SELECT id, name FROM {t}") == [[7, "z"]]
    config = DeltaTable(path).metadata().configuration
    assert config.get("delta.columnMapping.mode") == "name"
    assert config.get("delta.enableChangeDataFeed") == "true"
    assert config.get("delta.enableDeletionVectors") == "true"


def test_create_then_insert(alice_sql, catalog) -> None:
    t = f"{catalog}.d.m"
    alice_sql.ok(f"CREATE TABLE {t} (id BIGINT, name STRING) USING delta")
    assert alice_sql.rows(f"SELECT * FROM {t}") == []
    alice_sql.ok(f"INSERT INTO {t} VALUES (1, 'a')")
    alice_sql.ok(f"INSERT INTO {t} VALUES (2, 'b')")
    assert alice_sql.rows(f"SELECT id, name FROM {t} ORDER BY id") == [[1, "a"], [2, "b"]]
    path = _row(catalog, "m").location
    for version in _versions(catalog, "m"):
        ours = alice_sql.rows(f"SELECT id, name FROM {t} VERSION AS OF {version} ORDER BY id")
        assert ours == _delta_rows(path, version), version
