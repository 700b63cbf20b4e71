"""One user's big statements against another user's reads: ``python bench/planning_load.py``.

The issue's reproduction, measured. Starts gunicorn as ``make run`` does (``-c
python:webapp.gunicorn_conf``, 2 processes of 4 threads) on a throw-away data dir — the
embedded default (SQLite), or ``--database-url postgres://…`` (a database of its own, created
and migrated) — with two users, then:

1. the victim alone: ``GET /api/v1/catalogs`` in a loop (baseline);
2. eight concurrent ≈2 MB statements from the attacker while the victim reads;
3. eight concurrent statements just under the limits (the costliest shape measured per
   token: subqueries in an AND chain) while the victim reads;
4. the planner alone, in this process, without the limits: how long the shapes the limits
   now refuse would take, and how planning time grows with size (it was quadratic).

It reports; it does not assert (tests/security/test_planning_load.py asserts the bound).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import bench_database_url, ensure_database  # noqa: E402

from tests.security.servers import (  # noqa: E402
    Attack,
    Gunicorn,
    attack,
    heavy_statement,
    manage,
    reads_alone,
    server_env,
    two_megabyte_statement,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url",
        default="",
        help="PostgreSQL server URL (its database tessera_bench_planning is used); "
        "default: SQLite in the data dir, as make run",
    )
    parser.add_argument("-c", "--concurrency", type=int, default=8)
    parser.add_argument("--baseline-seconds", type=float, default=3.0)
    parser.add_argument("--skip-planner", action="store_true", help="skip part 4")
    return parser.parse_args()


USERS = """
from django.contrib.auth.models import User
from accounts.tokens import token_create
from catalog import services
for name in ("mallory", "victor"):
    user = User.objects.create_user(name, password="x")
    token_create(user=user, key=name.ljust(40, "0"))
services.catalog_create(user=User.objects.get(username="mallory"), name="demo")
"""


def token(name: str) -> str:
    return name.ljust(40, "0")


DATABASE = "tessera_bench_planning"


def drop_database(url: str) -> None:
    """Drop the bench's own database (made by ``ensure_database`` for this run)."""
    import psycopg
    from psycopg import sql

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(DATABASE)))


def start(args: argparse.Namespace, data: Path) -> Gunicorn:
    extra: dict[str, str] = {}
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url  # the server bench_database_url uses
        url = bench_database_url(DATABASE)
        if not ensure_database(url):
            sys.exit(f"{url} exists: drop it first (the bench makes its own users)")
        extra["DATABASE_URL"] = url
    env = server_env(data / "data", extra)
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(env, "shell", "-c", USERS)
    server = Gunicorn(env, data)
    server.start()
    return server


def session_of(server: Gunicorn) -> str:
    import requests

    response = requests.post(
        f"{server.url}/api/v1/sessions",
        json={"current_catalog": "demo"},
        headers={"Authorization": f"Token {token('mallory')}"},
        timeout=30,
    )
    response.raise_for_status()
    return str(response.json()["id"])


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def describe_reads(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"n={len(ordered)} median={ms(statistics.median(ordered))} p95={ms(p95)} "
        f"max={ms(ordered[-1])}"
    )


def report(name: str, measured: Attack) -> None:
    print(f"\n{name}")
    print(f"  victim GET /catalogs: {describe_reads([s for s, _ in measured.victim])}")
    failed = [status for _, status in measured.victim if status != 200]
    if failed:
        print(f"  victim errors: {failed}")
    answers: dict[str, list[float]] = {}
    for seconds, status, code in measured.attacker:
        answers.setdefault(f"{status} {code}", []).append(seconds)
    for answer, times in sorted(answers.items()):
        span = f"{min(times):.2f} to {max(times):.2f} s"
        print(f"  attacker: {len(times)} x {answer}, answered in {span}")


def planner_alone() -> None:
    """Part 4: the pure planner, without limits, in this process."""
    from core.identifiers import ObjectIdentifier
    from core.limits import StatementLimits, check_statement
    from core.planner import PlanContext, Relation, plan_statement
    from core.privileges import Access, Kind, Securable

    class Catalog:
        # Every object exists; the planner's user is an admin (the cost measured is planning).
        def access(self, principal: int | None = None) -> Access:
            return Access(1, admin=True)

        def catalog_securable(self, catalog: str) -> Securable:
            return Securable(Kind.CATALOG, catalog_id=1, path=(catalog,))

        def database_securable(self, catalog: str, database: str) -> Securable:
            return Securable(Kind.DATABASE, catalog_id=1, database_id=1, path=(catalog, database))

        def owns_inside(self, securable: Securable) -> bool:
            return False

        def catalog_exists(self, catalog: str) -> bool:
            return True

        def database_exists(self, catalog: str, database: str) -> bool:
            return True

        def get_relation(self, ident: ObjectIdentifier) -> Relation:
            s = Securable(Kind.TABLE, catalog_id=1, database_id=1, object_id=1, path=ident.parts)
            return Relation(
                ident, "table", "active", {"format": "parquet"}, "/w/t", None, securable=s
            )

        def get_function(self, ident: ObjectIdentifier) -> None:
            return None

        def get_system_function(self, name: str) -> None:
            return None

    unlimited = StatementLimits(max_chars=10**9, max_tokens=10**9, max_depth=10**6)
    context = PlanContext("demo", "default", storage_roots=("/w",), limits=unlimited)

    def plan(sql: str) -> float:
        began = time.perf_counter()
        try:
            plan_statement(sql, Catalog(), context)  # type: ignore[arg-type]
        except Exception as error:  # the figure is the time, whatever the outcome
            print(f"    ({type(error).__name__})", end="")
        return time.perf_counter() - began

    def scan(sql: str) -> float:
        began = time.perf_counter()
        with contextlib.suppress(Exception):  # refused: that is the point
            check_statement(sql, StatementLimits())
        return time.perf_counter() - began

    print("\n4. the planner alone, limits off (this process, one thread)")
    big = two_megabyte_statement()
    print(f"  2 MB IN list ({len(big):,} chars): refused by the scan in {ms(scan(big))}; ", end="")
    print(f"planning it would take {plan(big):.1f} s")
    heavy = heavy_statement()
    size = check_statement(heavy, unlimited)
    print(
        f"  heaviest shape at the token limit ({size.tokens:,} tokens, {len(heavy):,} chars): "
        f"planned in {plan(heavy):.2f} s"
    )
    shapes: dict[str, Callable[[int], str]] = {
        "chained CTEs": lambda n: (
            "WITH a0 AS (SELECT 1 AS x), "
            + ", ".join(f"a{i} AS (SELECT * FROM a{i - 1})" for i in range(1, n))
            + f" SELECT * FROM a{n - 1}"
        ),
        "AND chain of subqueries": lambda n: (
            "SELECT * FROM t WHERE "
            + " AND ".join(f"x IN (SELECT y FROM t{i % 50})" for i in range(n))
        ),
    }
    for name, make in shapes.items():
        figures = []
        for n in (2000, 4000, 8000):
            figures.append(f"n={n}: {plan(make(n)):.2f} s")
        print(f"  {name}: " + ", ".join(figures))


def main() -> None:
    args = parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, ")
    print(f"Python {platform.python_version()}; database: {args.database_url or 'SQLite'}")
    with tempfile.TemporaryDirectory(prefix="tessera-bench-planning-") as folder:
        server = start(args, Path(folder))
        try:
            session = session_of(server)
            alone = reads_alone(server.url, token("victor"), args.baseline_seconds)
            print(f"\n1. victim alone: {describe_reads(alone)}")
            for name, sql in (
                (f"2. {args.concurrency} x 2 MB statements", two_megabyte_statement()),
                (f"3. {args.concurrency} x statements under the limits", heavy_statement()),
            ):
                measured = attack(
                    server.url,
                    token("mallory"),
                    token("victor"),
                    session,
                    sql,
                    concurrency=args.concurrency,
                )
                report(name, measured)
        finally:
            server.stop()
            if args.database_url:
                drop_database(bench_database_url(DATABASE))
    if not args.skip_planner:
        planner_alone()


if __name__ == "__main__":
    main()
