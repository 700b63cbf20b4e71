"""Daily revenue, kept up to date by upserts: orders → one row per day in a keyed table.

The target has ``day DATE`` (its PRIMARY KEY), ``revenue DECIMAL(18, 2)`` and ``orders
BIGINT``, and the table option ``'write.mode' = 'upsert'``: an INSERT into it replaces the
rows whose ``day`` it brings and leaves every other day as it was (docs/writes.md,
upserts). The pipeline creates it when it is missing, and writes with the statement hint
``/*+ OPTIONS('write.mode' = 'upsert') */`` so that a keyed table made without the option
is upserted too::

    EXECUTE PIPELINE 'tessera_pipelines.revenue:daily_revenue'
        WITH ('orders' = 'shop.orders', 'target' = 'shop.daily_revenue', 'since' = '2026-11-01')

``since`` (``YYYY-MM-DD``, optional) recomputes only the days from that date on: after new
orders arrive for the last few days, run it with ``since`` = the first of them and only
those days' rows are written. ``ts_column`` and ``amount_column`` name the order's time
and amount (default ``ordered_at`` and ``amount``).
"""

from __future__ import annotations

from typing import Any

import tessera

from tessera_pipelines.args import column_name, optional_date, table_path

KEY = "day"


def target_schema() -> tessera.Schema:
    """The daily revenue table's schema: one row per day, keyed by the day."""
    return (
        tessera.Schema.new_builder()
        .column(KEY, "DATE NOT NULL")
        .column("revenue", "DECIMAL(18, 2)")
        .column("orders", "BIGINT")
        .primary_key(KEY)
        .build()
    )


def ensure_target(t_env: Any, target: str) -> None:
    """Create the keyed upsert table when it is missing; refuse one keyed differently."""
    try:
        schema = t_env.from_path(target).get_schema()
    except tessera.NotFoundError:
        descriptor = (
            tessera.TableDescriptor.for_managed("parquet")
            .schema(target_schema())
            .option("write.mode", "upsert")
            .comment("Revenue per day (tessera_pipelines.revenue:daily_revenue)")
            .build()
        )
        t_env.create_table(target, descriptor, ignore_if_exists=True)
        schema = t_env.from_path(target).get_schema()
    key = schema.primary_key or {}
    if [str(c).lower() for c in key.get("columns", [])] != [KEY]:
        raise ValueError(
            f"The table {target!r} exists without PRIMARY KEY ({KEY}): daily_revenue upserts "
            "by day, so give a new target or drop that table."
        )


def daily_query(
    t_env: Any, orders: str, ts_column: str, amount_column: str, since: Any = None
) -> Any:
    """Revenue and order count per day of ``orders`` (from ``since`` on) as a lazy Table."""
    ts, amount = tessera.col(ts_column), tessera.col(amount_column)
    dated = t_env.from_path(orders).select(f"CAST({ts} AS DATE) AS {KEY}", f"{amount} AS amount")
    if since is not None:
        dated = dated.where(f"{KEY} >= DATE {tessera.lit(since.isoformat())}")
    return dated.group_by(KEY).select(
        KEY,
        "CAST(sum(amount) AS DECIMAL(18, 2)) AS revenue",
        "count(*) AS orders",
    )


def daily_revenue(
    t_env: Any,
    orders: str = "",
    target: str = "",
    since: str = "",
    ts_column: str = "ordered_at",
    amount_column: str = "amount",
) -> None:
    """Upsert the revenue per day of ``orders`` into ``target`` (created if missing)."""
    orders = table_path("orders", orders)
    target = table_path("target", target)
    first_day = optional_date("since", since)
    ts_name = column_name("ts_column", ts_column)
    amount_name = column_name("amount_column", amount_column)
    ensure_target(t_env, target)
    daily = daily_query(t_env, orders, ts_name, amount_name, first_day)
    # The hint makes this INSERT an upsert by key even into a keyed table made elsewhere
    # without the table option; ``target`` is a checked path (identifiers only).
    upsert = "/*+ OPTIONS('write.mode' = 'upsert') */"
    t_env.execute_sql(f"INSERT INTO {target} {upsert} {daily.sql}").wait()
