"""Print the project's import circles, layer faults, modules over the size limit, and which
room imports which: `python3 scripts/check_imports.py` (exit 1 if any circle, fault or
oversized module). The rules are tests/core/test_layering.py's; this prints what it checks.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.core.test_layering import (
    MAX_MODULE_LINES,
    PACKAGES,
    REPO_ROOT,
    build_graph,
    find_cycles,
    layer_violations,
    project_files,
)


def main() -> int:
    files = project_files()
    sources = {name: path.read_text(encoding="utf-8") for name, path in files.items()}
    graph, _ = build_graph(sources)
    cycles = find_cycles(graph)
    faults = layer_violations(sources)
    oversized = sorted(
        (lines, str(path.relative_to(REPO_ROOT)))
        for path in files.values()
        if "migrations" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    )
    rooms: Counter[tuple[str, str]] = Counter()
    for source, targets in graph.items():
        for target in targets:
            a, b = source.split(".")[0], target.split(".")[0]
            if a != b and a in PACKAGES and b in PACKAGES:
                rooms[(a, b)] += 1
    print(f"{len(files)} modules, {sum(len(t) for t in graph.values())} imports among them")
    print(f"circles: {len(cycles)}")
    for cycle in cycles:
        print("  " + " -> ".join(cycle))
    print(f"layer faults: {len(faults)}")
    for fault in faults:
        print("  " + fault)
    print(f"modules over {MAX_MODULE_LINES} lines: {len(oversized)}")
    for lines, path in oversized:
        print(f"  {path}: {lines}")
    print("room -> room (module edges):")
    for (a, b), count in sorted(rooms.items()):
        print(f"  {a} -> {b}: {count}")
    return 1 if cycles or faults or oversized else 0


if __name__ == "__main__":
    sys.exit(main())
