"""Upserts by primary key (docs/writes.md, "Upserts"): the planner's part.

An INSERT upserts when its target table has the option ``'write.mode' = 'upsert'`` or when
the statement says so with Flink's dynamic table options hint right after the table name::

    INSERT INTO p /*+ OPTIONS('write.mode' = 'upsert') */ [(c1, …)] query

Only ``write.mode`` may be given there (``append`` overrides the table's upsert mode). The
hint is read from the statement's text (the tokenizer takes it for a comment) and never
reaches Spark: the worker runs only the spliced query. An upsert needs a managed table with
a primary key; INSERT OVERWRITE cannot upsert; a column list must name every key column.
The query may carry a row-kind column ``op`` (``+I``, ``-U``, ``+U``, ``-D``) when the table
has no column of that name: the worker takes it out before the columns are matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import CoreError
from core.identifiers import name_key
from core.options import WRITE_MODE, write_mode_value
from core.planner.errors import UnsupportedStatement
from core.planner.model import Relation
from core.planner.sources import is_managed_delta
from core.planner.tokens import Token, TokenCursor, tokenize
from core.session_properties import RUNTIME_MODE, runtime_mode_value

OP_COLUMN = "op"
_MAX_HINT = 2000


@dataclass(frozen=True)
class Upsert:
    """What the worker needs: the table's key columns, and whether ``op`` may be given."""

    key: tuple[str, ...]
    op_column: bool  # the table has no column ``op``: the query may add one

    def to_args(self) -> dict[str, Any]:
        return {"write_mode": "upsert", "key": list(self.key), "op_column": self.op_column}


def _hint_options(text: str) -> dict[str, str]:
    """``OPTIONS('k' = 'v', …)`` (the inside of one ``/*+ … */``) as a dict."""
    if len(text) > _MAX_HINT or "/*" in text:
        raise CoreError("The statement's hint is too long or holds a comment.")
    tokens = tokenize(text)
    cursor = TokenCursor(text, tokens, 0)
    if not cursor.accept_words("OPTIONS"):
        shown = text.strip()[:60]
        raise CoreError(
            f"The hint /*+ {shown} */ after an INSERT's table is not supported: only "
            f"/*+ OPTIONS('{WRITE_MODE}' = 'upsert'|'append') */ is.",
            details={"hint": shown},
        )
    if not cursor.accept_punct("("):
        raise CoreError("Expected '(' after OPTIONS in the statement's hint.")
    options: dict[str, str] = {}
    while True:
        key, value = cursor.peek(), cursor.peek(2)
        if key is None or key.kind != "string" or not cursor.peek(1) or value is None:
            raise CoreError(
                "The hint's OPTIONS take 'key' = 'value' pairs of quoted strings, e.g. "
                f"OPTIONS('{WRITE_MODE}' = 'upsert')."
            )
        cursor.position += 1
        if not cursor.accept_punct("=") or value.kind != "string":
            raise CoreError("The hint's OPTIONS take 'key' = 'value' pairs of quoted strings.")
        cursor.position += 1
        name = key.text.lower()
        if name not in (WRITE_MODE, RUNTIME_MODE):
            raise CoreError(
                f"The option '{key.text}' cannot be given in a statement's hint: only "
                f"'{WRITE_MODE}' and '{RUNTIME_MODE}' can.",
                details={"key": key.text},
            )
        if name in options:
            raise CoreError(f"The option '{name}' is given twice in the hint.")
        options[name] = (
            write_mode_value(key=key.text, value=value.text)
            if name == WRITE_MODE
            else runtime_mode_value(key.text, value.text)
        )
        if cursor.accept_punct(")"):
            break
        if not cursor.accept_punct(","):
            raise CoreError("Expected ',' or ')' in the hint's OPTIONS.")
    if cursor.peek() is not None:
        raise CoreError("The hint holds more than OPTIONS(…).")
    return options


def _hints(gap: str) -> list[str]:
    """The insides of the ``/*+ … */`` comments in ``gap`` (text between two tokens: only
    whitespace and comments). Line comments are skipped, so a hint commented out with ``--``
    is no hint; a bracketed comment nests as in Spark."""
    found: list[str] = []
    index = 0
    while index < len(gap):
        if gap.startswith("--", index):
            end = gap.find("\n", index)
            index = len(gap) if end < 0 else end + 1
        elif gap.startswith("/*", index):
            depth, cursor = 1, index + 2
            while depth and cursor < len(gap):
                if gap.startswith("/*", cursor):
                    depth, cursor = depth + 1, cursor + 2
                elif gap.startswith("*/", cursor):
                    depth, cursor = depth - 1, cursor + 2
                else:
                    cursor += 1
            if gap.startswith("/*+", index):
                found.append(gap[index + 3 : cursor - 2])
            index = cursor
        else:
            index += 1
    return found


def read_hint(
    text: str, tokens: Sequence[Token], table_end: int, query_start: int
) -> dict[str, str]:
    """The options of the hint after the table name (token ``table_end - 1`` is the name's
    last): ``write.mode`` and ``execution.runtime-mode``, each when given. A hint anywhere
    else before the query is refused rather than silently taken for a comment."""
    options: dict[str, str] = {}
    for index in range(1, query_start + 1):
        if index >= len(tokens):
            break
        gap = text[tokens[index - 1].end : tokens[index].start]
        found = _hints(gap)
        if not found:
            continue
        if index != table_end or len(found) > 1:
            raise CoreError(
                "A statement's hint /*+ OPTIONS(…) */ goes right after the table name, once: "
                "INSERT INTO p /*+ OPTIONS('write.mode' = 'upsert') */ …"
            )
        options = _hint_options(found[0])
    return options


def _table_mode(table: Relation) -> str:
    value = next((v for k, v in table.options.items() if k.lower() == WRITE_MODE), "append")
    return str(value).strip().lower()


def plan_upsert(
    table: Relation,
    hint: str | None,
    *,
    overwrite: bool,
    external: bool,
    columns: Sequence[str] | None,
) -> Upsert | None:
    """The upsert an INSERT into ``table`` makes (None: a plain insert), or the refusal."""
    mode = hint if hint is not None else _table_mode(table)
    if mode != "upsert":
        return None
    shown = table.identifier.quoted()
    details: dict[str, Any] = {"identifier": list(table.identifier.parts)}
    if overwrite:
        raise CoreError(
            f"INSERT OVERWRITE cannot upsert into {shown}: an overwrite replaces every row. Use "
            "INSERT INTO to upsert, or the hint /*+ OPTIONS('write.mode' = 'append') */ to "
            "overwrite.",
            details=details,
        )
    if external:
        raise CoreError(
            f"Table {shown} is external: upserts write managed tables only.", details=details
        )
    if is_managed_delta(table):
        raise UnsupportedStatement(
            f"Table {shown} is a managed Delta table: its upserts by key are not built yet; "
            "write it with INSERT INTO.",
            details=details,
        )
    schema = table.resolved_schema
    if schema is None or schema.primary_key is None:
        raise CoreError(
            f"Table {shown} has no primary key, so it cannot take upserts: declare one with "
            "PRIMARY KEY (…) NOT ENFORCED.",
            details=details,
        )
    key = tuple(schema.primary_key.columns)
    if columns is not None:
        listed = {name_key(c) for c in columns}
        missing = [c for c in key if name_key(c) not in listed]
        if missing:
            raise CoreError(
                f"An upsert into {shown} needs its key column(s) {', '.join(missing)} in the "
                "column list.",
                details={**details, "columns": missing},
            )
    op_column = all(name_key(c.name) != OP_COLUMN for c in schema.columns)
    return Upsert(key, op_column)
