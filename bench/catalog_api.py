"""Catalog API latency at scale: ``make bench-catalog``, i.e. ``python bench/catalog_api.py``.

Uses its own PostgreSQL database (``tessera_bench`` on the server of ``DATABASE_URL``; created
when missing, migrated, and filled once with ``manage.py fill_catalog`` -- ``--rebuild``
fills it again), so it never touches the test database. Then it measures server-side
latency in process with ``django.test.Client`` (token auth, a real user): listing a page of
tables (first and deep pages), fetching one table, search (table- and column-name
fragments, with and without a kind filter) and listing databases. It reports p50/p95/p99/max
and the SQL queries per request, as text and as a Markdown table, and PASS/MISS against the
targets. It reports; it does not assert. Beside the wall times it reports the CPU a request
cost: this process's (p50/p95, ``time.thread_time``) and the PostgreSQL backend's average
(``/proc``, when the server runs on this machine) — on a shared machine wall times mostly
measure the wait for a core, CPU times what the request itself costs.

``--grants`` (ADR 0011) sets up, idempotently, a team ``bench_analysts`` with the user
``bench_reader``: ``USE, SELECT`` on 10 of the 100 databases, ``SELECT`` on 500 tables spread
over 30 others (``--grants heavy``: 2,000 more over the same 30), and 100 tables of 10 other
databases owned by ``bench_reader``. ``--as owner`` (the default: ``bench``, who owns the
catalog), ``--as reader`` (``bench_reader``, implies ``--grants``) or ``--as admin``
(``bench_admin``, staff: no filter, the baseline) chooses who asks. With grants, three
request types are added: a list of a partly visible database, a hidden table (404), and a
completion in a partly visible database.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from harness import bench_database_url, ensure_database

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CATALOG = "bench"
PAGE_SIZE = 50
BENCH_USER = "bench"
READER = "bench_reader"
ADMIN = "bench_admin"  # --as admin: no filter at all, today's SQL (the baseline)
TEAM = "bench_analysts"
FULL_DATABASES = 10  # USE, SELECT to the team: every table visible
PARTIAL_DATABASES = 30  # SELECT on some tables: partly visible
GRANTED_TABLES = 500
HEAVY_TABLES = 2000
OWNED_DATABASES = 10
OWNED_TABLES = 100
PRIVATE = "bench_private"  # a catalog of bench's the reader may not see at all


@dataclass(frozen=True)
class Target:
    p95_ms: float


@dataclass
class Result:
    name: str
    times_ms: list[float]
    queries: tuple[int, int]  # min, max per request
    avg_bytes: float
    target: Target | None
    cpu_ms: list[float]  # this process's CPU per request (waiting for a core not counted)
    db_cpu_ms: float | None  # the PostgreSQL backend's CPU per request, on average

    def pct(self, p: int, values: list[float] | None = None) -> float:
        cuts = statistics.quantiles(values or self.times_ms, n=100, method="inclusive")
        return cuts[p - 1]

    @property
    def cpu(self) -> str:
        """CPU per request, p50/p95 of the web process plus the database's average: what a
        request costs on a shared machine, where wall times mostly measure the wait."""
        db = f" + {self.db_cpu_ms:.1f}" if self.db_cpu_ms is not None else ""
        return f"{self.pct(50, self.cpu_ms):.1f} / {self.pct(95, self.cpu_ms):.1f}{db}"

    @property
    def sql(self) -> str:
        """SQL queries per request: "3", or "3-4" when requests differed."""
        low, high = self.queries
        return f"{low}" if low == high else f"{low}-{high}"

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "-"
        return "PASS" if self.pct(95) <= self.target.p95_ms else "MISS"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-name", default="tessera_bench", help="PostgreSQL database to use")
    parser.add_argument("--rebuild", action="store_true", help="drop and fill the catalog again")
    parser.add_argument("--databases", type=int, default=100)
    parser.add_argument("--tables-per-database", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("-n", "--requests", type=int, default=300, help="requests per type")
    parser.add_argument("--warmup", type=int, default=30, help="warm-up requests per type")
    parser.add_argument(
        "--only",
        default="",
        help="measure only the request types whose name contains one of these comma-separated "
        "words, e.g. --only search,get",
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() the start-up objects before measuring, as a server may do after "
        "forking its workers: full collections then skip them",
    )
    parser.add_argument(
        "--grants",
        nargs="?",
        const="on",
        choices=["on", "heavy"],
        help="set up the grants of ADR 0011 (team bench_analysts, user bench_reader); "
        "heavy: 2,000 more table grants",
    )
    parser.add_argument(
        "--as",
        dest="who",
        choices=["owner", "reader", "admin"],
        default="owner",
        help="owner: bench, who owns the catalog; reader: bench_reader (implies --grants); "
        "admin: bench_admin, a staff user (no filter: the baseline)",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="EXPLAIN ANALYZE the SQL of the slowest request of each type",
    )
    return parser.parse_args()


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_DEBUG"] = "0"  # measure the production configuration
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import warnings

    import django

    # WhiteNoise warns that the static root was never collected: not what is measured here.
    warnings.filterwarnings("ignore", message="No directory at", module="django.core.handlers")
    django.setup()
    import logging

    # Refused and missing lookups are measured on purpose: not a warning line each.
    logging.getLogger("django.request").setLevel(logging.ERROR)


def memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "?"


class GcPauses:
    """Time spent in the garbage collector, by generation: the usual cause of p99 outliers."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count[info["generation"]] += 1
            self.ms[info["generation"]] += (time.perf_counter() - self._started) * 1000

    def summary(self) -> str:
        return ", ".join(
            f"gen{g}: {self.count[g]} x, {self.ms[g]:.0f} ms" for g in range(3) if self.count[g]
        )


@dataclass
class GrantWorld:
    """What ``--grants`` set up: the databases by how much of them the reader sees."""

    full: list[str]  # every table visible (USE, SELECT on the database)
    partial: list[str]  # some tables granted one by one
    owned: list[str]  # databases holding tables the reader owns
    hidden: list[str]  # nothing visible (in a catalog the reader sees: refused, 403)
    grants: int  # the reader's grant rows (team's), objects and databases
    private: list[tuple[str, str]]  # (database, table) of PRIVATE: hidden (404)


def set_up_grants(catalog: Any, heavy: bool, seed: int) -> GrantWorld:
    """Idempotent: the team, the reader, their grants and the reader's tables, chosen by
    ``seed`` from the databases in name order (the same choice on every run)."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from catalog.models import Catalog, Database, Grant, Table

    if not Catalog.objects.filter(name_key=PRIVATE).exists():
        call_command(
            "fill_catalog",
            catalog=PRIVATE,
            databases=1,
            tables_per_database=1000,
            columns=20,
            shapes=100,
            seed=seed,
            owner=BENCH_USER,
        )

    reader = User.objects.filter(username=READER).first()
    if reader is None:
        reader = User.objects.create_user(READER, password=os.urandom(16).hex())
    team, _ = Group.objects.get_or_create(name=TEAM)
    reader.groups.add(team)
    principal = {"team": team, "principal_key": f"team:{team.pk}"}
    rng = random.Random(seed + 18)
    databases = list(Database.objects.filter(catalog=catalog).order_by("name_key"))
    rng.shuffle(databases)
    full = databases[:FULL_DATABASES]
    partial = databases[FULL_DATABASES : FULL_DATABASES + PARTIAL_DATABASES]
    owned = databases[
        FULL_DATABASES + PARTIAL_DATABASES : FULL_DATABASES + PARTIAL_DATABASES + OWNED_DATABASES
    ]
    hidden = databases[FULL_DATABASES + PARTIAL_DATABASES + OWNED_DATABASES :]
    rows = [
        Grant(
            privilege=privilege,
            securable_kind="database",
            catalog_id=catalog.pk,
            database_id=d.pk,
            securable_key=f"database:{d.pk}",
            **principal,
        )
        for d in full
        for privilege in ("USE", "SELECT")
    ]
    candidates = list(
        Table.objects.filter(database__in=partial, kind=Table.KIND_TABLE)
        .order_by("pk")
        .values_list("pk", "database_id")
    )
    chosen = rng.sample(candidates, min(len(candidates), GRANTED_TABLES + HEAVY_TABLES))
    wanted = chosen[: GRANTED_TABLES + (HEAVY_TABLES if heavy else 0)]
    rows += [
        Grant(
            privilege="SELECT",
            securable_kind="table",
            catalog_id=catalog.pk,
            database_id=database_id,
            table_id=table_id,
            securable_key=f"relation:{table_id}",
            **principal,
        )
        for table_id, database_id in wanted
    ]
    Grant.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
    if not heavy:  # a heavy run before: back to the plain 500
        extra = [table_id for table_id, _ in chosen[GRANTED_TABLES:]]
        Grant.objects.filter(principal_key=principal["principal_key"], table_id__in=extra).delete()
    mine = list(
        Table.objects.filter(database__in=owned, kind=Table.KIND_TABLE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    Table.objects.filter(pk__in=rng.sample(mine, min(len(mine), OWNED_TABLES))).update(owner=reader)
    count = Grant.objects.filter(principal_key=principal["principal_key"]).count()
    return GrantWorld(
        full=[d.name for d in full],
        partial=[d.name for d in partial],
        owned=[d.name for d in owned],
        hidden=[d.name for d in hidden],
        grants=count,
        private=list(
            Table.objects.filter(database__catalog__name_key=PRIVATE, kind=Table.KIND_TABLE)
            .order_by("pk")
            .values_list("database__name", "name")
        ),
    )


def _backend_cpu_ms(pid: int | None) -> float | None:
    """CPU time (user + system) the PostgreSQL backend ``pid`` used so far, when it runs on
    this machine (``/proc``); None otherwise."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    args = parse_args()
    url = bench_database_url(args.db_name)
    if ensure_database(url):
        print(f"Created database {args.db_name}.")
    setup_django(url)

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts.tokens import token_create
    from catalog.models import Catalog, Column, Database, Table
    from webapp.pagination import encode_page_token

    call_command("migrate", interactive=False, verbosity=0)
    user = User.objects.filter(username=BENCH_USER).first()
    if user is None:
        user = User.objects.create_user(BENCH_USER, password=os.urandom(16).hex())

    fill_seconds: float | None = None
    if args.rebuild or not Catalog.objects.filter(name_key=CATALOG).exists():
        started = time.perf_counter()
        call_command(
            "fill_catalog",
            catalog=CATALOG,
            databases=args.databases,
            tables_per_database=args.tables_per_database,
            columns=args.columns,
            seed=args.seed,
            owner=BENCH_USER,
            drop_existing=args.rebuild,
        )
        fill_seconds = time.perf_counter() - started

    catalog = Catalog.objects.get(name_key=CATALOG)
    world: GrantWorld | None = None
    if args.grants or args.who == "reader":
        world = set_up_grants(catalog, args.grants == "heavy", args.seed)
    if args.who == "admin" and not User.objects.filter(username=ADMIN).exists():
        User.objects.create_user(ADMIN, password=os.urandom(16).hex(), is_staff=True)
    asker = User.objects.get(username={"reader": READER, "admin": ADMIN}.get(args.who, BENCH_USER))
    _, key = token_create(user=asker, name="bench")
    in_catalog = Table.objects.filter(database__catalog=catalog)
    counts = {
        "databases": Database.objects.filter(catalog=catalog).count(),
        "tables": in_catalog.filter(kind=Table.KIND_TABLE).count(),
        "views": in_catalog.filter(kind=Table.KIND_VIEW).count(),
        "columns": Column.objects.filter(table__database__catalog=catalog).count(),
    }
    everywhere = {
        "tables+views": Table.objects.count(),
        "columns": Column.objects.count(),
    }
    expected = args.databases * args.tables_per_database
    if counts["tables"] + counts["views"] != expected:
        print(
            f"NOTE: catalog [{CATALOG}] holds {counts['tables'] + counts['views']:,} tables and "
            f"views, not {expected:,}; pass --rebuild to fill it at the requested size."
        )
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid: int | None = cursor.fetchone()[0]

    rng = random.Random(args.seed)
    db_names = list(
        Database.objects.filter(catalog=catalog).order_by("name_key").values_list("name", flat=True)
    )
    # The reader's lists and lookups go to the databases they see whole; the owner's anywhere.
    seen_dbs = world.full if world is not None and args.who == "reader" else db_names
    sample = list(
        Table.objects.filter(database__catalog=catalog)
        .order_by("?")
        .values_list("id", "database__name", "name", "kind")[:2000]
    )
    column_names = list(
        Column.objects.filter(table_id__in=[row[0] for row in sample[:500]]).values_list(
            "name", flat=True
        )
    )
    table_names = [name for _, _, name, _ in sample]
    seen_tables = list(
        Table.objects.filter(database__catalog=catalog, database__name__in=seen_dbs, kind="table")
        .order_by("?")
        .values_list("database__name", "name")[:2000]
    )
    # Deep pages: the token the server would issue after the name at a random offset.
    keys_by_db: dict[str, list[str]] = {}
    for db in rng.sample(seen_dbs, min(20, len(seen_dbs))):
        keys_by_db[db] = list(
            Table.objects.filter(database__catalog=catalog, database__name=db, kind="table")
            .order_by("name_key")
            .values_list("name_key", flat=True)
        )
    db_keys = [key.lower() for key in db_names]
    hidden_tables: list[tuple[str, str]] = []
    if world is not None:
        hidden_tables = list(
            Table.objects.filter(
                database__catalog=catalog, database__name__in=world.hidden, kind="table"
            )
            .order_by("?")
            .values_list("database__name", "name")[:2000]
        )

    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    base = f"/api/v1/catalogs/{quote(CATALOG, safe='')}"

    def fragment(names: list[str]) -> str:
        name = rng.choice(names).lower()
        length = rng.randint(3, min(8, len(name)))
        start = rng.randint(0, len(name) - length)
        return name[start : start + length]

    def search_url(kind: str | None) -> str:
        names = table_names if rng.random() < 0.5 else column_names
        params = {"q": fragment(names), "page_size": PAGE_SIZE}
        if kind:
            params["kind"] = kind
        return f"/api/v1/search?{urlencode(params)}"

    def list_in(databases: list[str]) -> Callable[[], str]:
        def make() -> str:
            db = quote(rng.choice(databases), safe="")
            return f"{base}/databases/{db}/tables?page_size={PAGE_SIZE}"

        return make

    def list_deep() -> str:
        db = rng.choice(list(keys_by_db))
        keys = keys_by_db[db]
        after = keys[rng.randint(PAGE_SIZE, max(PAGE_SIZE, len(keys) - PAGE_SIZE - 1))]
        token = encode_page_token(after)
        return (
            f"{base}/databases/{quote(db, safe='')}/tables?page_size={PAGE_SIZE}&page_token={token}"
        )

    def get_in(
        tables: list[tuple[str, str]], missing: bool = False, base: str = base
    ) -> Callable[[], str]:
        def make() -> str:
            db, name = rng.choice(tables)
            if missing:
                name = f"{name}_missing"
            return f"{base}/databases/{quote(db, safe='')}/tables/{quote(name, safe='')}"

        return make

    def list_databases() -> str:
        params: dict[str, Any] = {"page_size": PAGE_SIZE}
        if rng.random() < 0.5 and len(db_keys) > 1:
            params["page_token"] = encode_page_token(rng.choice(db_keys[:-1]))
        return f"{base}/databases?{urlencode(params)}"

    def complete_in(databases: list[str]) -> Callable[[], str]:
        # What the editor asks while a user types a path: `bench.<db>.<1-3 letters>`.
        def make() -> str:
            db = rng.choice(databases)
            name = rng.choice(table_names)
            typed = f"{CATALOG}.{db}.{name[: rng.randint(1, 3)]}"
            return f"/api/v1/complete?{urlencode({'path': typed, 'limit': 50})}"

        return make

    list_target, search_target = Target(20.0), Target(50.0)
    kinds: list[tuple[str, Callable[[], str], Target | None, int]] = [
        ("List tables, first page (50)", list_in(seen_dbs), list_target, 200),
        ("List tables, deep page (50)", list_deep, list_target, 200),
        ("Get table", get_in(seen_tables), list_target, 200),
        ("Search, all kinds", lambda: search_url(None), search_target, 200),
        ("Search, kind=table", lambda: search_url("table"), search_target, 200),
        ("Search, kind=column", lambda: search_url("column"), search_target, 200),
        ("List databases (50)", list_databases, None, 200),
        ("Complete a path (50)", complete_in(seen_dbs), list_target, 200),
    ]
    if world is not None:
        private = f"/api/v1/catalogs/{PRIVATE}"
        if args.who == "reader":
            refused = ("Get table, invisible database (403)", get_in(hidden_tables), 403)
            hidden = ("Get hidden table (404)", get_in(world.private, base=private), 404)
        else:
            refused = ("Get table, reader-invisible database", get_in(hidden_tables), 200)
            hidden = ("Get missing table (404)", get_in(world.private, True, private), 404)
        kinds[3:3] = [
            ("List tables, partly visible database", list_in(world.partial), list_target, 200),
            (refused[0], refused[1], list_target, refused[2]),
            (hidden[0], hidden[1], list_target, hidden[2]),
        ]
        kinds.append(
            ("Complete in a partly visible database", complete_in(world.partial), list_target, 200)
        )

    wanted = [word.strip().lower() for word in args.only.split(",") if word.strip()]
    if wanted:
        kinds = [k for k in kinds if any(word in k[0].lower() for word in wanted)]
    if args.gc_freeze:
        gc.collect()
        gc.freeze()
    load_before = _load()
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    results: list[Result] = []
    slowest: dict[str, tuple[float, str]] = {}
    for name, make_url, target, status in kinds:
        for _ in range(args.warmup):
            response = client.get(make_url())
            assert response.status_code == status, (response.status_code, response.content[:300])
        times: list[float] = []
        cpu: list[float] = []
        sizes = 0
        db_before = _backend_cpu_ms(backend_pid)
        for _ in range(args.requests):
            request_url = make_url()
            started, cpu_started = time.perf_counter(), time.thread_time()
            response = client.get(request_url)
            elapsed = (time.perf_counter() - started) * 1000
            cpu.append((time.thread_time() - cpu_started) * 1000)
            assert response.status_code == status, (response.status_code, response.content[:300])
            times.append(elapsed)
            sizes += len(response.content)
            if elapsed > slowest.get(name, (-1.0, ""))[0]:
                slowest[name] = (elapsed, request_url)
        db_after = _backend_cpu_ms(backend_pid)
        db_cpu = (
            (db_after - db_before) / args.requests
            if db_before is not None and db_after is not None
            else None
        )
        query_counts = []
        for _ in range(20):  # counted apart, so that capturing does not weigh on the timings
            with CaptureQueriesContext(connection) as captured:
                client.get(make_url())
            query_counts.append(len(captured))
        results.append(
            Result(
                name,
                times,
                (min(query_counts), max(query_counts)),
                sizes / len(times),
                target,
                cpu,
                db_cpu,
            )
        )

    print()
    print(
        f"Machine: {os.cpu_count()} cores, {memory_gib()} RAM, {platform.platform()}, "
        f"Python {platform.python_version()}, PostgreSQL {pg_version} (database {args.db_name})"
    )
    print(
        f"Catalog [{CATALOG}]: {counts['databases']:,} databases, {counts['tables']:,} tables, "
        f"{counts['views']:,} views, {counts['columns']:,} columns "
        f"(whole database: {everywhere['tables+views']:,} tables+views, "
        f"{everywhere['columns']:,} columns)"
    )
    if fill_seconds is not None:
        print(f"Fill time: {fill_seconds:.1f} s")
    if world is not None:
        print(
            f"Grants (team {TEAM}, {world.grants:,} rows): USE, SELECT on {len(world.full)} "
            f"databases, SELECT on tables of {len(world.partial)} others, {OWNED_TABLES} tables "
            f"of {len(world.owned)} more owned by {READER}; asking as {asker.username}"
        )
    gc.callbacks.remove(pauses)
    print(f"Load average before/after measuring: {load_before} / {_load()}")
    frozen = " (start-up objects frozen)" if args.gc_freeze else ""
    print(f"Garbage collection while measuring{frozen}: {pauses.summary() or 'none'}")
    print(f"{args.requests} requests per type after {args.warmup} warm-up requests; ms:\n")
    header = f"{'request':40} {'p50':>7} {'p95':>7} {'p99':>7} {'max':>7} {'SQL':>5} {'KB':>6}"
    print(header + f"  {'CPU p50 / p95 + db':>20}  target")
    for r in results:
        goal = f"p95<={r.target.p95_ms:.0f} {r.verdict}" if r.target else ""
        print(
            f"{r.name:40} {r.pct(50):7.1f} {r.pct(95):7.1f} {r.pct(99):7.1f} "
            f"{max(r.times_ms):7.1f} {r.sql:>5} {r.avg_bytes / 1024:6.1f}  {r.cpu:>20}  {goal}"
        )

    print(
        "\n| Request | p50 ms | p95 ms | p99 ms | max ms | SQL queries | CPU ms p50 / p95 + db "
        "| Target (p95) | Result |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        goal = f"≤ {r.target.p95_ms:.0f} ms" if r.target else "-"
        print(
            f"| {r.name} | {r.pct(50):.1f} | {r.pct(95):.1f} | {r.pct(99):.1f} | "
            f"{max(r.times_ms):.1f} | {r.sql} | {r.cpu} | {goal} | {r.verdict} |"
        )
    missed = [r.name for r in results if r.verdict == "MISS"]
    print(f"\n{'MISS: ' + ', '.join(missed) if missed else 'All targets met.'}")

    if args.explain:
        explain_slowest(client, slowest)


def explain_slowest(client: Any, slowest: dict[str, tuple[float, str]]) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for name, (elapsed, url) in slowest.items():
        print(f"\n=== {name}: slowest {elapsed:.1f} ms: {url}")
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        for query in captured.captured_queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT") or "accounts_apitoken" in sql:
                continue
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
                plan = "\n".join(row[0] for row in cursor.fetchall())
            print(f"\n{sql}\n{plan}")


if __name__ == "__main__":
    main()
