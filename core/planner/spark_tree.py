"""A Spark parse tree as ``engine/jvm/TreeDescriber.java`` describes it, for the SQL guard.

Pure Python: the tree arrives as JSON text; nothing here imports pyspark or Django.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

Ref: TypeAlias = Any  # a node's number, a string, True, False or None

_KINDS = {
    "p": "plan",
    "e": "expr",
    "t": "tree",
    "o": "product",
    "s": "seq",
    "m": "map",
    "n": "num",
    "y": "type",
    "j": "object",
    "u": "enum",
    "q": "opaque",
}
_CLASSED = frozenset({"p", "e", "t", "o", "j", "u", "q"})


class SparkTree:
    """A parse tree as ``TreeDescriber`` describes it: flat, nodes by number, class and field
    names interned (see engine/jvm/TreeDescriber.java for the format)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        nodes, classes, fields = data.get("nodes"), data.get("classes"), data.get("fields")
        if not isinstance(nodes, list) or "root" not in data:
            raise ValueError("not a described Spark tree")
        self.root: Ref = data["root"]
        self.nodes: list[list[Any]] = nodes
        self.classes: list[str] = list(classes or [])
        self.field_names: list[str] = list(fields or [])

    @classmethod
    def from_json(cls, text: str) -> SparkTree:
        return cls(json.loads(text))

    def node(self, ref: Ref) -> list[Any] | None:
        """The node a ref points at (None for a scalar: bool is not a ref)."""
        return self.nodes[ref] if type(ref) is int else None

    def kind(self, node: Sequence[Any]) -> str:
        return _KINDS.get(node[0], str(node[0]))

    def class_name(self, node: Sequence[Any]) -> str:
        return self.classes[node[1]] if node[0] in _CLASSED else ""

    def fields(self, node: Sequence[Any]) -> dict[str, Ref]:
        """A case class's fields by name (empty for other nodes)."""
        if node[0] not in ("p", "e", "t", "o"):
            return {}
        names = self.field_names
        return {names[node[i]]: node[i + 1] for i in range(2, len(node) - 1, 2)}

    def items(self, ref: Ref) -> list[Ref]:
        """The items of a sequence (or Option) ref; a scalar or None is no items."""
        node = self.node(ref)
        if node is None or node[0] != "s":
            return []
        return list(node[1:])

    def strings(self, ref: Ref) -> list[str] | None:
        """A sequence of strings (name parts), or None if it is anything else."""
        node = self.node(ref)
        if node is None or node[0] != "s" or not all(isinstance(i, str) for i in node[1:]):
            return None
        return list(node[1:])

    def children(self, node: Sequence[Any]) -> Sequence[Ref]:
        """Every ref a node holds (field values, items, map keys and values)."""
        tag = node[0]
        if tag in ("p", "e", "t", "o"):
            return node[3::2]
        if tag in ("s", "m"):
            return node[1:]
        return ()
