"""Replay a stored changelog into a table (FLIP-136 ``fromChangelogStream``).

``changes`` is a table of change rows: a column ``op`` with each row's kind (``+I`` insert,
``-U`` before an update, ``+U`` after it, ``-D`` delete), a column that orders the log
(``order_by``, default ``seq``) and the data columns. ``target`` becomes a new managed table
(CTAS) holding what the log describes: per ``key`` the last row of the log decides —
``+I``/``+U`` keep that row, ``-D`` removes the key, ``-U`` rows are skipped::

    EXECUTE PIPELINE 'tessera_pipelines.changelog:replay_changelog'
        WITH ('changes' = 'cdc.customer_changes', 'target' = 'cdc.customers', 'key' = 'id')

The log is read in its order (``order_by``) through the session's result, so it is bounded
by the server's result limit (``RESULT_TOO_LARGE`` past it): for large logs, upsert into a
keyed table instead (``INSERT … /*+ OPTIONS('write.mode' = 'upsert') */``, docs/writes.md).
"""

from __future__ import annotations

from typing import Any

import tessera

from tessera_pipelines.args import column_name, table_path

OP = "op"


def replay_changelog(
    t_env: Any, changes: str = "", target: str = "", key: str = "", order_by: str = "seq"
) -> None:
    """Write the table the changelog ``changes`` describes, keyed by ``key``, to ``target``."""
    changes = table_path("changes", changes)
    target = table_path("target", target)
    key_name = column_name("key", key)
    order_name = column_name("order_by", order_by)
    log = t_env.from_path(changes)
    resolved = log.get_schema()
    names = resolved.column_names
    for needed, what in ((OP, "the row kind"), (order_name, "the log's order"), (key_name, "key")):
        if needed not in names:
            raise ValueError(
                f"The table {changes!r} has no column {needed!r} ({what}); "
                f"its columns are {', '.join(names)}."
            )
    builder = tessera.Schema.new_builder()
    for column in resolved.columns:
        if column.name not in (OP, order_name) and column.kind == "physical":
            builder.column(column.name, column.data_type)
    schema = builder.primary_key(key_name).build()
    rows = log.order_by(tessera.col(order_name)).to_pandas().drop(columns=[order_name])
    state = t_env.from_changelog(rows, schema)
    descriptor = (
        tessera.TableDescriptor.for_managed("parquet")
        .comment(f"{changes} replayed by {key_name}")
        .build()
    )
    t_env.create_table(target, descriptor, query=state).wait()
