"""The layering of docs/architecture.md, true in the imports.

Every project module's imports are read with ``ast`` — at module level and inside functions
alike (an import inside a function is still a dependency; it only runs later) — and the
graph among the project's own modules is checked: no cycles, the layer rules, and the size
of the modules in ``jobs/``. Each rule has a small self-test that shows it can fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# The rooms, top down: a room imports only the rooms after it (and Django, webapp's shared
# REST helpers). The front door plans and submits; results and table data are written by
# jobs' workers; jobs keep the record; the catalog is below all of them; core is pure.
ROOMS_TOP_DOWN = (
    "dashboards",
    "schedules",
    "flightsql",
    "hiveserver2",
    "sessions",
    "results",
    "tabledata",
    "jobs",
    "workbench",
    "accounts",
    "catalog",
    "audit",
    "core",
)
# The entry points wire every room: Django's ready() (jobs.apps) and the ordered steps of
# a job's transitions it installs (jobs.steps), the periodic sweeps (jobs.maintenance), the
# Celery task bodies and process hooks (tasks, worker).
ENTRY_POINTS = ("jobs.apps", "jobs.steps", "jobs.maintenance", "jobs.tasks", "jobs.worker")
# The Spark engine serves the worker: it may import any room; only the worker reaches it.
ENGINE = "engine"
PACKAGES = (
    *ROOMS_TOP_DOWN,
    ENGINE,
    "webapp",
    "tessera_udfs",
    "tessera_pipelines",
)
# The example pipelines are user code of the Python Table API (docs/api.md §4): they run
# with a remote client as well as on a worker, so they import the client and nothing of
# the server.
PIPELINE_EXAMPLES = "tessera_pipelines"
PIPELINE_EXAMPLES_MAY_NOT_IMPORT = frozenset(
    {"django", "rest_framework", "celery", "pyspark", "py4j", *PACKAGES[:-1]}
)
APPS = (*ROOMS_TOP_DOWN[:-1], ENGINE)
MAX_MODULE_LINES = 500
# Who may touch Spark: the engine, run by workers only.
SPARK_PACKAGES = frozenset({"pyspark", "py4j"})
SPARK_MODULES = (ENGINE,)
# Who may import the engine: the Celery tasks and the worker's process hooks (both inside
# functions, so that the web process, which imports them too, never loads pyspark).
EXECUTOR_USERS = (ENGINE, "jobs.tasks", "jobs.worker", "jobs.management.commands.engine_host")
# What webapp (settings, urls, health) may import of a room: its routes and views, and the
# one function of jobs it asks about workers.
APP_PUBLIC_MODULES = frozenset(
    {
        "accounts.views",
        "accounts.team_views",
        "accounts.token_views",
        "audit.urls",
        "catalog.urls",
        "sessions.urls",
        "jobs.urls",
        "results.urls",
        "tabledata.urls",
        "jobs.dispatch",
        "workbench.urls",
        "schedules.urls",
        "hiveserver2.urls",
    }
)
# What the rooms may import of webapp: the shared REST helpers. The Celery app itself is
# only reached through jobs.dispatch.
WEBAPP_SHARED = frozenset({"webapp.api", "webapp.pagination", "webapp.errors", "webapp.rows"})
CELERY_APP = "webapp.celery"
CELERY_USERS = frozenset({"webapp", "jobs.dispatch"})


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported name, dotted (a module, or a module's attribute)
    line: int
    in_function: bool = False  # runs only when the function is called


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            files[_module_name(path)] = path
    return files


def imports_of(module: str, source: str) -> list[Import]:
    """Every import in ``source`` (any depth); ``from a import b`` gives ``a.b``. Relative
    imports are not used in the project; they are resolved against the module's package."""
    tree = ast.parse(source)
    lazy = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    found: list[Import] = []
    for node in ast.walk(tree):
        deferred = id(node) in lazy
        if isinstance(node, ast.Import):
            found.extend(Import(module, alias.name, node.lineno, deferred) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: -node.level]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "__future__":
                continue
            found.extend(
                Import(module, f"{base}.{alias.name}", node.lineno, deferred)
                for alias in node.names
            )
    return found


def resolve(target: str, modules: Iterable[str]) -> str | None:
    """The project module an imported name belongs to (longest prefix), or None."""
    known = set(modules)
    parts = target.split(".")
    for size in range(len(parts), 0, -1):
        candidate = ".".join(parts[:size])
        if candidate in known:
            return candidate
    return None


def build_graph(sources: Mapping[str, str]) -> tuple[dict[str, set[str]], list[Import]]:
    """The edges among the given modules, and every import (for the rules)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    every: list[Import] = []
    for name, text in sources.items():
        for item in imports_of(name, text):
            every.append(item)
            target = resolve(item.target, sources)
            if target is not None and target != name:
                graph[name].add(target)
    return graph, every


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle (a path back to its start) per strongly connected component of more than
    one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return [_cycle_in(graph, set(component)) for component in components]


def _cycle_in(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return sorted(component)


def _within(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer_violations(sources: Mapping[str, str]) -> list[str]:
    """Every import that breaks a layer rule, as ``module:line: imported — rule``."""
    _, every = build_graph(sources)
    bad: list[str] = []
    for item in every:
        target = resolve(item.target, sources) or item.target
        top = item.target.split(".")[0]
        where = f"{item.source}:{item.line}: {item.target}"
        source_top = item.source.split(".")[0]
        if source_top in ROOMS_TOP_DOWN[:-1] and top in ROOMS_TOP_DOWN and top != source_top:
            below = ROOMS_TOP_DOWN[ROOMS_TOP_DOWN.index(source_top) + 1 :]
            if top not in below and not _within(item.source, ENTRY_POINTS):
                bad.append(f"{where} — {source_top} imports only {', '.join(below) or 'Python'}")
        if source_top == "core" and top in PACKAGES and top != "core":
            bad.append(f"{where} — core imports no project app")
        if top in SPARK_PACKAGES and not _within(item.source, SPARK_MODULES):
            bad.append(f"{where} — only engine imports pyspark")
        if _within(target, ("engine",)) and not _within(item.source, EXECUTOR_USERS):
            bad.append(f"{where} — only the worker's tasks reach the executor")
        reaches_spark = top in SPARK_PACKAGES or _within(target, SPARK_MODULES)
        if reaches_spark and not item.in_function and not _within(item.source, SPARK_MODULES):
            bad.append(f"{where} — imported by the web process: Spark only inside functions")
        if _within(item.source, ("webapp",)) and top in APPS and target not in APP_PUBLIC_MODULES:
            bad.append(f"{where} — webapp reaches apps only through {sorted(APP_PUBLIC_MODULES)}")
        if source_top in APPS and top == "webapp":
            allowed = WEBAPP_SHARED | (
                {CELERY_APP} if _within(item.source, CELERY_USERS) else set()
            )
            if target not in allowed:
                bad.append(f"{where} — apps use only {sorted(WEBAPP_SHARED)} of webapp")
        if target == CELERY_APP and not _within(item.source, CELERY_USERS):
            bad.append(f"{where} — every Celery send goes through jobs.dispatch")
        if source_top == PIPELINE_EXAMPLES and top in PIPELINE_EXAMPLES_MAY_NOT_IMPORT:
            bad.append(f"{where} — the example pipelines use only the tessera client")
        if source_top == "audit" and top == "webapp" and target not in WEBAPP_SHARED:
            bad.append(f"{where} — audit imports only core and Django (the apps write to it)")
    return sorted(set(bad))


def _sources() -> dict[str, str]:
    return {name: path.read_text(encoding="utf-8") for name, path in project_files().items()}


# --- the project ------------------------------------------------------------------------------


def test_the_project_modules_are_found() -> None:
    sources = _sources()
    for expected in ("core.planner.classify", "sessions.statements", "catalog.services"):
        assert expected in sources


def test_no_import_cycles_among_project_modules() -> None:
    graph, _ = build_graph(_sources())
    cycles = find_cycles(graph)
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_layer_rules_hold() -> None:
    assert layer_violations(_sources()) == []


def test_no_module_is_over_the_limit() -> None:
    too_long = {
        str(path.relative_to(REPO_ROOT)): lines
        for path in project_files().values()
        if "migrations" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}


# --- the rules can fail -------------------------------------------------------------------------


def test_a_cycle_through_a_function_level_import_is_found() -> None:
    # The old planner's circle: classify imports queries; queries imported classify inside
    # a function.
    sources = {
        "core.planner.classify": "from core.planner.queries import plan_query\n",
        "core.planner.queries": "def f():\n    from core.planner.classify import plan_tokens\n",
        "core.planner.tokens": "",
    }
    graph, _ = build_graph(sources)
    assert find_cycles(graph) == [
        ["core.planner.classify", "core.planner.queries", "core.planner.classify"]
    ]


def test_a_cycle_through_from_package_import_module_is_found() -> None:
    # An old serializers <-> services circle: ``from jobs import services``.
    sources = {
        "jobs": "",
        "jobs.serializers": "from jobs import services\n",
        "jobs.services": "def f():\n    from jobs import serializers\n",
    }
    graph, _ = build_graph(sources)
    assert find_cycles(graph) == [["jobs.serializers", "jobs.services", "jobs.serializers"]]


def test_the_layer_rules_catch_the_old_imports() -> None:
    sources = {
        "catalog.completion": "def f():\n    from jobs.models import TemporaryObject\n",
        "catalog.services": "def f():\n    from webapp.celery import app\n",
        "webapp.health": "def f():\n    from jobs.worker import live_worker_count\n",
        "core.limits": "import django\nfrom sessions import planning\n",
        "sessions.views": "import pyspark\nfrom engine import run\n",
        "jobs.tasks": "from engine import run\ndef f():\n    from engine import io\n",
        "engine.run": "import pyspark\n",
        "jobs.dispatch": "from webapp.celery import app\n",
        "sessions.planning": "",
        "jobs.models": "",
        "jobs.worker": "",
        "webapp.celery": "",
    }
    found = "\n".join(layer_violations(sources))
    assert "catalog.completion:2: jobs.models.TemporaryObject — catalog imports only audit" in found
    assert "catalog.services:2: webapp.celery.app — apps use only" in found
    assert "catalog.services:2: webapp.celery.app — every Celery send" in found
    assert "webapp.health:2: jobs.worker.live_worker_count — webapp reaches" in found
    assert "core.limits:2: sessions.planning — core imports no project app" in found
    assert "sessions.views:1: pyspark — only engine imports pyspark" in found
    assert "sessions.views:2: engine.run — only the worker's tasks" in found
    assert "jobs.tasks:1: engine.run — imported by the web process" in found
    assert "jobs.tasks:3" not in found
    sources_with_faults = {line.split(":")[0] for line in found.splitlines()}
    assert "engine.run" not in sources_with_faults
    assert "jobs.dispatch" not in sources_with_faults


def test_a_room_imports_only_the_rooms_below_it() -> None:
    sources = {
        "jobs.lifecycle": "from tabledata import commit\nfrom catalog.models import Table\n",
        "jobs.maintenance": "from results import store\nfrom sessions import services\n",
        "tabledata.commit": "from results.store import write\nfrom jobs import lifecycle\n",
        "results.store": "def f():\n    from sessions.statements import submit\n",
        "sessions.statements": "from results import store\nfrom engine import run\n",
        "engine.run": "from sessions import commands\nfrom tabledata import commit\n",
        "workbench.views": "from jobs.models import Job\nfrom catalog import access\n",
        "catalog.models": "",
    }
    found = "\n".join(layer_violations(sources))
    assert "jobs.lifecycle:1: tabledata.commit — jobs imports only workbench" in found
    assert "tabledata.commit:1: results.store.write — tabledata imports only jobs" in found
    assert "results.store:2: sessions.statements.submit — results imports only" in found
    assert "workbench.views:1: jobs.models.Job — workbench imports only accounts" in found
    for fine in ("jobs.lifecycle:2", "jobs.maintenance", "tabledata.commit:2", "engine.run:"):
        assert fine not in found, found
    assert "sessions.statements:1" not in found


def test_audit_imports_only_core_and_django() -> None:
    sources = {
        "audit.services": "from django.db import connection\nfrom core.errors import CoreError\n",
        "audit.views": "from webapp.pagination import page_body\nfrom audit import services\n",
        "audit.selectors": "from django.contrib.auth.models import User\n",
        "audit.bad": "from catalog.models import Grant\ndef f():\n    from jobs import models\n",
        "audit.worse": "from accounts import teams\nfrom webapp.urls import api_v1\n",
        "catalog.grants": "from audit.services import record\n",
        "accounts.teams": "from audit.services import record\n",
        "webapp.pagination": "",
        "webapp.urls": "",
    }
    found = "\n".join(layer_violations(sources))
    assert "audit.bad:1: catalog.models.Grant — audit imports only core" in found
    assert "audit.bad:3: jobs.models — audit imports only core" in found
    assert "audit.worse:1: accounts.teams — audit imports only core" in found
    assert "audit.worse:2: webapp.urls.api_v1 — audit imports only core and Django" in found
    for fine in ("audit.services", "audit.views", "audit.selectors", "catalog.", "accounts."):
        assert f"{fine}:" not in found and f"\n{fine}" not in found, found


def test_the_example_pipelines_use_only_the_client() -> None:
    sources = {
        "tessera_pipelines.good": "import tessera\nfrom tessera_pipelines import args\n",
        "tessera_pipelines.args": "import re\n",
        "tessera_pipelines.spark": "def f():\n    from pyspark.sql import functions\n",
        "tessera_pipelines.server": "from catalog import services\nimport django\n",
    }
    found = "\n".join(layer_violations(sources))
    assert "tessera_pipelines.spark:2: pyspark.sql.functions — the example pipelines" in found
    assert "tessera_pipelines.server:1: catalog.services — the example pipelines" in found
    assert "tessera_pipelines.server:2: django — the example pipelines" in found
    assert "tessera_pipelines.good" not in found
