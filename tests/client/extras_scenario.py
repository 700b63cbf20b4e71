"""One pass of the client and its extras against a live server, run as a script by
tests/client/test_extras_versions.py under two interpreters: the suite's own (the versions
constraints.txt pins, the highest the extras allow) and a virtual environment with the
lowest versions client/pyproject.toml allows (client/constraints-lowest.txt). Prints one
JSON document of what came back, in plain values, so the two runs can be compared.

Usage: python extras_scenario.py URL USERNAME PASSWORD CATALOG
"""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import sqlalchemy as sa
import tessera
from sqlalchemy.dialects import registry
from tessera import dbapi

# Without `pip install ./client`, the entry point is not there: register it as it would.
registry.register("tessera", "tessera.dialect", "TesseraDialect")

TYPES_SQL = (
    "SELECT CAST(1.25 AS DECIMAL(10, 2)) AS d, TIMESTAMP_NTZ'2024-01-01 10:00:00' AS ntz, "
    "DATE'1900-01-01' AS old, DATE'2100-06-01' AS far, map('a', 1, 'b', 2) AS m, "
    "array(1, 2) AS a, named_struct('x', 1, 'y', 's') AS s, X'CAFE' AS b, "
    "CAST(NULL AS INT) AS n, 'é' AS t"
)


def plain(value: Any) -> Any:
    """A JSON value for what pandas, Arrow or DB-API gave, the same whatever their versions."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        # PyArrow gives a map as [(key, value), ...]; as pandas does later, read it as a dict.
        if value and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            return {str(k): plain(v) for k, v in sorted(value)}
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return plain(value.tolist())
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value


def rows_of(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{c: plain(v) for c, v in row.items()} for row in frame.to_dict("records")]


# NOT NULL at the top, inside a nullable struct (NULL on a row), in an array and a map.
NULLABILITY_SQL = (
    "SELECT id, IF(id = 1, NULL, named_struct('x', id)) AS ns, array(id) AS a, "
    "map('k', id) AS m FROM range(1, 3) ORDER BY id"
)


def nullability(field: pa.Field) -> list[Any]:
    """``[name, nullable, children…]``: the same on every pyarrow (its text differs)."""
    kind = field.type
    if pa.types.is_map(kind):
        children = [kind.key_field, kind.item_field]
    elif pa.types.is_list(kind):
        children = [kind.value_field]
    elif pa.types.is_struct(kind):
        children = [kind.field(i) for i in range(kind.num_fields)]
    else:
        children = []
    return [field.name, field.nullable, *[nullability(c) for c in children]]


def main(url: str, username: str, password: str, catalog: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "versions": {
            "pandas": pd.__version__,
            "pyarrow": pa.__version__,
            "sqlalchemy": sa.__version__,
        }
    }
    with tessera.connect(url, username=username, password=password) as env:
        env.execute_sql(f"CREATE CATALOG {catalog}").wait()
        env.execute_sql(f"CREATE DATABASE {catalog}.db").wait()
        env.use_catalog(catalog)
        env.use_database("db")

        result = env.execute_sql(TYPES_SQL)
        arrow = result.to_arrow()
        out["arrow_types"] = [str(f.type) for f in arrow.schema]
        out["arrow_rows"] = [{k: plain(v) for k, v in r.items()} for r in arrow.to_pylist()]
        nested = env.execute_sql(NULLABILITY_SQL)
        out["nullability"] = [nullability(f) for f in nested.to_arrow().schema]
        out["nullability_rows"] = nested.to_arrow().to_pylist()[0]["ns"]
        out["nullable_columns"] = [c.nullable for c in nested.get_resolved_schema().columns]
        typed = env.execute_sql(TYPES_SQL).to_pandas()
        out["pandas_rows"] = rows_of(typed)
        # What a pandas user holds (a map is a dict, as PySpark's toPandas gives).
        out["pandas_value_types"] = {c: type(v).__name__ for c, v in typed.iloc[0].items()}

        frame = pd.DataFrame(
            {
                "id": pd.array([1, 2, None], dtype="Int64"),
                "name": ["a", None, "c"],
                "at": pd.to_datetime(["2024-01-01 10:00", "1950-06-01 00:00", "2040-12-31 23:59"]),
                "price": [Decimal("1.50"), Decimal("2.25"), None],
            }
        )
        env.create_temporary_view("uploaded", env.from_pandas(frame))
        out["from_pandas"] = rows_of(
            env.execute_sql("SELECT * FROM uploaded ORDER BY id NULLS LAST").to_pandas()
        )
        env.execute_sql("CREATE TABLE kept AS SELECT * FROM uploaded").wait()

    engine = sa.create_engine(
        f"tessera://{username}:{password}@{url.split('://', 1)[1].rstrip('/')}/{catalog}/db"
    )
    try:
        out["sqlalchemy_tables"] = sorted(sa.inspect(engine).get_table_names())
        out["read_sql"] = rows_of(
            pd.read_sql("SELECT id, name FROM kept ORDER BY id NULLS LAST", engine)
        )
    finally:
        engine.dispose()

    conn = dbapi.connect(url, username=username, password=password, catalog=catalog, database="db")
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT id, price FROM kept WHERE id = :id", {"id": 2})
        out["dbapi_description"] = [d[0] for d in cursor.description or ()]
        out["dbapi_rows"] = [[plain(v) for v in row] for row in cursor.fetchall()]
    finally:
        conn.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
