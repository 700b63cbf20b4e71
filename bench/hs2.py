"""HiveServer2 and the DB-API against REST and plain PySpark: ``python bench/hs2.py``.

Starts the product as ``make run`` does (``bench/latency.py``'s ``Stack``: gunicorn and one
worker on the embedded defaults, or ``--configs pg-redis``) plus ``manage.py hiveserver2``
on a free port, and measures in one run:

1. ``SELECT 1`` round trips, interleaved after a random pause of 0-1 s each: REST (``POST
   …/statements`` with ``wait`` and ``page_size``: the page in the answer), HiveServer2
   through PyHive (binary transport, SASL PLAIN with an API token; ``execute`` +
   ``fetchall``), ``tessera.dbapi`` (``execute`` + ``fetchall``, over REST), and plain
   PySpark's ``spark.sql("SELECT 1").collect()`` in this process;
2. a large fetch: ``--rows`` rows of three columns through HiveServer2 (``fetchmany`` of
   ``--fetch-size``), through REST (every result page) and plain PySpark (``collect()``),
   in rows per second;
3. a DBeaver-style metadata walk over HiveServer2 (``GetSchemas`` → ``GetTables`` →
   ``GetColumns`` of ``--walk`` tables) in a catalog filled with ``--tables`` tables by
   ``manage.py fill_catalog`` (rows written straight into the catalog's tables), p50/p95
   per call.

It reports (markdown; ``--json`` for the raw figures) and never asserts; the issue's targets
are printed beside the figures. Spark's own Thrift server is not measured: its jar
(``spark-hive-thriftserver``) is not served to this machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latency import (
    Api,
    Stack,
    config_of,
    describe,
    flush_redis,
    free_port,
    fresh_pg_database,
    load_text,
    run_configs,
    tessera_select1,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "client" / "src"))

PAUSE_SEED = 37
HS2_OVER_REST_P50_MS = 10.0
WALK_P95_MS = 50.0
# GetSchemas is called this many times, and GetTables on this many databases (the walk's
# GetColumns calls are spread over them).
WALK_REPEATS = 20
BIG_SQL = "SELECT id, id * 2 AS twice, cast(id AS STRING) AS label FROM range(0, {rows})"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--configs", default="embedded", help="embedded and/or pg-redis")
    parser.add_argument("-n", type=int, default=40, help="SELECT 1 round trips per client")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the large fetch")
    parser.add_argument("--fetch-size", type=int, default=10_000, help="HS2 rows per fetch")
    parser.add_argument("--tables", type=int, default=100_000, help="tables in the catalog")
    parser.add_argument("--walk", type=int, default=1_000, help="tables the walk visits")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures")
    return parser.parse_args()


@dataclass
class Figures:
    select1: dict[str, list[float]] = field(default_factory=dict)
    fetch: dict[str, float] = field(default_factory=dict)  # rows per second
    walk: dict[str, list[float]] = field(default_factory=dict)
    load: list[str] = field(default_factory=list)


def timed(call: Callable[[], Any]) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def hs2_connection(port: int, token: str, catalog: str) -> Any:
    from pyhive import hive  # type: ignore[import-untyped]

    return hive.connect(
        host="127.0.0.1",
        port=port,
        username="token",
        password=token,
        auth="CUSTOM",
        configuration={"use:catalog": catalog},
    )


def measure_select1(api: Api, hs2: Any, dbapi: Any, spark: Any, n: int) -> dict[str, list[float]]:
    session = api.session()
    hs2_cursor, dbapi_cursor = hs2.cursor(), dbapi.cursor()

    def rest() -> None:
        tessera_select1(api, session, None)

    def over_hs2() -> None:
        hs2_cursor.execute("SELECT 1")
        assert hs2_cursor.fetchall() == [(1,)]

    def over_dbapi() -> None:
        dbapi_cursor.execute("SELECT 1")
        assert [tuple(row) for row in dbapi_cursor.fetchall()] == [(1,)]

    def plain() -> None:
        spark.sql("SELECT 1").collect()

    sides = {"REST (page in the answer)": rest, "HiveServer2 (PyHive)": over_hs2}
    sides |= {"tessera.dbapi": over_dbapi, "plain PySpark collect()": plain}
    for call in sides.values():  # warm-up
        for _ in range(3):
            call()
    out: dict[str, list[float]] = {name: [] for name in sides}
    pauses = random.Random(PAUSE_SEED)
    for _ in range(n):
        for name, call in sides.items():
            time.sleep(pauses.uniform(0, 1))
            out[name].append(timed(call))
    return out


def measure_fetch(api: Api, hs2: Any, spark: Any, rows: int, fetch_size: int) -> dict[str, float]:
    sql = BIG_SQL.format(rows=rows)
    cursor = hs2.cursor()
    cursor.arraysize = fetch_size

    def over_hs2() -> None:
        cursor.execute(sql)
        got = 0
        while batch := cursor.fetchmany(fetch_size):
            got += len(batch)
        assert got == rows, got

    def over_rest() -> None:
        session = api.session()
        job = api.follow(api.statement(session, sql, wait=30), lambda j: j["status"] in TERMINAL)
        assert job["status"] == "FINISHED", job.get("error")
        _, got = api.result(job["id"], 1000)  # the largest page the API gives
        assert len(got) == rows, len(got)

    def plain() -> None:
        assert len(spark.sql(sql).collect()) == rows

    return {
        name: rows / timed(call)
        for name, call in (
            ("HiveServer2 (PyHive fetchmany)", over_hs2),
            ("REST (every result page)", over_rest),
            ("plain PySpark collect()", plain),
        )
    }


TERMINAL = {"FINISHED", "FAILED", "CANCELED"}


def measure_walk(hs2: Any, catalog: str, walk: int) -> dict[str, list[float]]:
    """GetSchemas (``WALK_REPEATS`` times), then GetTables of ``WALK_REPEATS`` schemas and
    GetColumns of ``walk`` of their tables, spread evenly (what DBeaver does when a tree is
    opened)."""
    out: dict[str, list[float]] = {"GetSchemas": [], "GetTables": [], "GetColumns": []}
    client, handle = hs2._client, hs2._sessionHandle
    from TCLIService import ttypes  # type: ignore[import-untyped]

    def call(kind: str, request: Any) -> Any:
        began = time.perf_counter()
        response = getattr(client, kind)(request)
        fetched = client.FetchResults(
            ttypes.TFetchResultsReq(
                operationHandle=response.operationHandle,
                orientation=ttypes.TFetchOrientation.FETCH_NEXT,
                maxRows=10_000,
            )
        )
        out[kind].append(time.perf_counter() - began)
        client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=response.operationHandle))
        return fetched

    def first_column(fetched: Any, index: int) -> list[str]:
        column = fetched.results.columns[index]
        return list(column.stringVal.values)

    for _ in range(WALK_REPEATS):  # a p95 needs more than one call
        schemas = first_column(
            call("GetSchemas", ttypes.TGetSchemasReq(sessionHandle=handle, catalogName=catalog)),
            0,
        )
    walked = schemas[:WALK_REPEATS]
    per_schema = max(1, -(-walk // max(1, len(walked))))
    seen = 0
    for schema in walked:
        tables = first_column(
            call(
                "GetTables",
                ttypes.TGetTablesReq(sessionHandle=handle, catalogName=catalog, schemaName=schema),
            ),
            2,
        )
        for table in tables[:per_schema]:
            call(
                "GetColumns",
                ttypes.TGetColumnsReq(
                    sessionHandle=handle, catalogName=catalog, schemaName=schema, tableName=table
                ),
            )
            seen += 1
            if seen >= walk:
                return out
    return out


def report(name: str, figures: Figures) -> str:
    lines = [f"\n### {name}\n", f"load average at start / end: {' / '.join(figures.load)}\n"]
    lines.append("| `SELECT 1` | n | p50 ms | p95 ms | mean ms |\n|---|---:|---:|---:|---:|")
    for side, values in figures.select1.items():
        d = describe(values)
        lines.append(
            f"| {side} | {len(values)} | {d['p50']:.1f} | {d['p95']:.1f} | {d['mean']:.1f} |"
        )
    if figures.select1:
        hs2 = describe(figures.select1["HiveServer2 (PyHive)"])["p50"]
        rest = describe(figures.select1["REST (page in the answer)"])["p50"]
        verdict = "met" if hs2 - rest <= HS2_OVER_REST_P50_MS else "missed"
        lines.append(
            f"\nHiveServer2 over REST at p50: {hs2 - rest:+.1f} ms "
            f"(target ≤ {HS2_OVER_REST_P50_MS:.0f} ms: {verdict})"
        )
    if figures.fetch:
        lines.append("\n| large fetch | rows/s |\n|---|---:|")
        lines.extend(f"| {side} | {rate:,.0f} |" for side, rate in figures.fetch.items())
    if figures.walk:
        lines.append("\n| metadata walk (HiveServer2) | calls | p50 ms | p95 ms | max ms |")
        lines.append("|---|---:|---:|---:|---:|")
        for kind, values in figures.walk.items():
            if values:
                d = describe(values)
                verdict = "met" if d["p95"] <= WALK_P95_MS else "missed"
                lines.append(
                    f"| {kind} | {len(values)} | {d['p50']:.1f} | {d['p95']:.1f} ({verdict}) "
                    f"| {d['max']:.1f} |"
                )
    return "\n".join(lines)


def run_config(name: str, args: argparse.Namespace, spark: Any) -> Figures:
    import tessera.dbapi

    figures = Figures(load=[load_text()])
    config = config_of(name)
    if config.database_url:
        fresh_pg_database(config.database_url)
    if config.broker_url:
        flush_redis(config.broker_url)
    data_dir = Path(tempfile.mkdtemp(prefix=f"tessera-hs2-{name}-"))
    stack = Stack(config, data_dir, [data_dir / "storage"])
    hs2_port = free_port()
    stack.env["TESSERA_HS2_PORT"] = str(hs2_port)
    # Results are kept whole up to this many rows (100,000 by default: past it truncated).
    stack.env["TESSERA_RESULT_MAX_ROWS"] = str(max(args.rows, 100_000))
    try:
        stack.start()
        stack._spawn("hiveserver2", [str(Path(sys.executable)), "manage.py", "hiveserver2"])
        api = Api(stack.port, stack.token)
        session = api.session()
        for sql in ("CREATE CATALOG hs2bench", "CREATE DATABASE hs2bench.d"):
            job = api.statement(session, sql, wait=30)
            assert job["status"] == "FINISHED", job.get("error")
        deadline = time.monotonic() + 60
        while True:
            try:
                hs2 = hs2_connection(hs2_port, stack.token, "hs2bench")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        dbapi = tessera.dbapi.connect(
            f"http://127.0.0.1:{stack.port}", stack.token, catalog="hs2bench"
        )
        print("SELECT 1 …", flush=True)
        figures.select1 = measure_select1(api, hs2, dbapi, spark, args.n)
        print(f"fetch of {args.rows:,} rows …", flush=True)
        figures.fetch = measure_fetch(api, hs2, spark, args.rows, args.fetch_size)
        per_database = max(1, min(1000, args.tables // 100))
        databases = max(1, args.tables // per_database)
        print(f"fill: {databases} databases x {per_database} tables …", flush=True)
        stack.manage(
            "fill_catalog",
            "--catalog",
            "walk",
            "--databases",
            str(databases),
            "--tables-per-database",
            str(per_database),
            "--owner",
            "bench",
            timeout=3600,  # 100,000 tables: minutes on 2 cores
        )
        print(f"metadata walk over {args.walk} tables …", flush=True)
        figures.walk = measure_walk(hs2, "walk", args.walk)
        hs2.close()
        dbapi.close()
    finally:
        figures.load.append(load_text())
        stack.stop()
    return figures


def main() -> None:
    args = parse_args()

    def measure(name: str, spark: Any) -> tuple[str, Any]:
        figures = run_config(name, args, spark)
        return report(name, figures), figures.__dict__

    run_configs(
        "HiveServer2 and DB-API against REST and plain PySpark",
        "hs2",
        args.configs,
        args.json,
        measure,
    )


if __name__ == "__main__":
    main()
