"""The shipped example pipelines (tessera_pipelines) run with a remote ``tessera.connect``
environment on generated input, compared with what plain PySpark computes from the same
input in the test process (``plain_spark``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pytest

from tessera_pipelines.changelog import replay_changelog
from tessera_pipelines.revenue import daily_revenue
from tessera_pipelines.sessions import sessionize
from tests.live_client import connect_as, tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]

START = 1_795_000_000  # 2026-11-18, in epoch seconds
GAP_MINUTES = 30


@pytest.fixture
def t_env(server: str) -> Iterator[tessera.TableEnvironment]:
    """alice in catalog ``web``, database ``default``."""
    with connect_as(server, "alice") as env:
        env.execute_sql("CREATE CATALOG web").wait()
    with connect_as(server, "alice", catalog="web") as env:
        yield env


def page_views(seed: int = 16) -> pd.DataFrame:
    """A few hundred views of 6 users; gaps below, at and above 30 minutes, ties in ts."""
    rng = random.Random(seed)
    rows = []
    for user in range(1, 7):
        at = START + rng.randrange(0, 3600)
        for _ in range(rng.randrange(20, 60)):
            rows.append((user, at, f"/p/{rng.randrange(12)}"))
            at += rng.choice([0, 5, 60, 600, 1799, 1800, 1801, 3600, 7200, 86_400])
    frame = pd.DataFrame(rows, columns=["user_id", "ts", "url"])
    frame["ts"] = pd.to_datetime(frame["ts"], unit="s", utc=True)
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)


def expected_sessions(spark, frame: pd.DataFrame) -> set[tuple[Any, ...]]:
    """Plain PySpark: Spark's own session_window, then the same aggregates."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    views = spark.createDataFrame(frame)
    order = F.struct("ts", "url")
    grouped = views.groupBy("user_id", F.session_window("ts", f"{GAP_MINUTES} minutes")).agg(
        F.min("ts").alias("start"),
        F.max("ts").alias("end"),
        F.count("*").alias("pages"),
        F.countDistinct("url").alias("distinct_urls"),
        F.min_by("url", order).alias("entry_url"),
        F.max_by("url", order).alias("exit_url"),
    )
    numbered = grouped.withColumn(
        "session_no", F.row_number().over(Window.partitionBy("user_id").orderBy("start"))
    )
    return {
        tuple(row)
        for row in numbered.select(
            "user_id",
            "session_no",
            F.unix_seconds("start"),
            F.unix_seconds("end"),
            "pages",
            "distinct_urls",
            "entry_url",
            "exit_url",
        ).collect()
    }


def test_sessionize_gives_what_plain_pyspark_computes(t_env, plain_spark):
    frame = page_views()
    t_env.execute_sql("CREATE TABLE page_views (user_id BIGINT, ts TIMESTAMP, url STRING)").wait()
    t_env.from_pandas(frame).execute_insert("page_views").wait()

    sessionize(t_env, source="page_views", target="sessions", gap_minutes=str(GAP_MINUTES))

    assert "sessions" in t_env.list_tables()
    got = t_env.from_path("sessions")
    assert got.get_schema().column_names == [
        "user_id",
        "session_no",
        "session_start",
        "session_end",
        "pages",
        "distinct_urls",
        "entry_url",
        "exit_url",
        "duration_seconds",
    ]
    read = got.select(
        "user_id",
        "session_no",
        "unix_seconds(session_start)",
        "unix_seconds(session_end)",
        "pages",
        "distinct_urls",
        "entry_url",
        "exit_url",
        "duration_seconds",
    )
    rows = [tuple(r) for r in read.collect()]
    assert all(r[8] == r[3] - r[2] for r in rows), "duration = end - start"
    expected = expected_sessions(plain_spark, frame)
    assert {r[:8] for r in rows} == expected
    assert len(rows) == len(expected) and sum(r[4] for r in rows) == len(frame)
    # the gap rule made several sessions per user, not one per user or one per view
    assert 6 < len(rows) < len(frame) / 2

    # a second run into the same target refuses (the target must be new)
    with pytest.raises(tessera.AlreadyExistsError):
        sessionize(t_env, source="page_views", target="sessions")


def test_sessionize_of_a_missing_source_is_not_found(t_env):
    with pytest.raises(tessera.NotFoundError):
        sessionize(t_env, source="no_views", target="sessions")
    assert "sessions" not in t_env.list_tables()


def orders_frame(first_id: int, count: int, days: list[int], seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = [
        (
            first_id + i,
            START + rng.choice(days) * 86_400 + rng.randrange(0, 86_400),
            Decimal(rng.randrange(100, 100_000)) / 100,
        )
        for i in range(count)
    ]
    frame = pd.DataFrame(rows, columns=["order_id", "ordered_at", "amount"])
    frame["ordered_at"] = pd.to_datetime(frame["ordered_at"], unit="s", utc=True)
    return frame


def expected_revenue(spark, frame: pd.DataFrame) -> dict[Any, Any]:
    from pyspark.sql import functions as F

    daily = (
        spark.createDataFrame(frame)
        .withColumn("amount", F.col("amount").cast("decimal(12, 2)"))
        .groupBy(F.to_date("ordered_at").alias("day"))
        .agg(F.sum("amount").cast("decimal(18, 2)").alias("revenue"), F.count("*").alias("n"))
    )
    return {row.day: (row.revenue, row.n) for row in daily.collect()}


def test_daily_revenue_upserts_only_the_days_it_recomputes(t_env, plain_spark):
    t_env.execute_sql(
        "CREATE TABLE orders (order_id BIGINT, ordered_at TIMESTAMP, amount DECIMAL(12, 2))"
    ).wait()
    first = orders_frame(1, 300, [0, 1, 2, 3, 4], seed=1)
    t_env.from_pandas(first).execute_insert("orders").wait()

    daily_revenue(t_env, orders="orders", target="daily")

    def read() -> dict[Any, Any]:
        return {r["day"]: (r["revenue"], r["orders"]) for r in t_env.from_path("daily").collect()}

    assert read() == expected_revenue(plain_spark, first)
    schema = t_env.from_path("daily").get_schema()
    assert (schema.primary_key or {}).get("columns") == ["day"]

    # new orders on day 4 (already there) and day 5 (new); recompute from day 4 on
    more = orders_frame(1000, 40, [4, 5], seed=2)
    t_env.from_pandas(more).execute_insert("orders").wait()
    before = read()
    day4 = sorted(before)[4]
    daily_revenue(t_env, orders="orders", target="daily", since=day4.isoformat())
    after = read()
    expected = expected_revenue(plain_spark, pd.concat([first, more], ignore_index=True))
    assert after == expected
    assert {d: v for d, v in after.items() if d < day4} == {
        d: v for d, v in before.items() if d < day4
    }
    assert len(after) == len(before) + 1


def test_daily_revenue_refuses_a_target_keyed_otherwise(t_env):
    t_env.execute_sql("CREATE TABLE orders (ordered_at TIMESTAMP, amount DECIMAL(12, 2))").wait()
    t_env.execute_sql("CREATE TABLE plain (day DATE, revenue DECIMAL(18, 2), orders BIGINT)").wait()
    with pytest.raises(ValueError, match="without PRIMARY KEY"):
        daily_revenue(t_env, orders="orders", target="plain")


def changes_frame(count: int = 240, seed: int = 3) -> pd.DataFrame:
    """A changelog of customers: inserts, before/after images of updates, deletes, keys
    coming back after a delete; stored shuffled (``seq`` gives the log's order)."""
    rng = random.Random(seed)
    current: dict[int, tuple[str, str]] = {}
    rows: list[tuple[str, int, str, str]] = []
    for _ in range(count):
        key = rng.randrange(1, 40)
        row = (f"name{rng.randrange(1000)}", rng.choice(["Oslo", "Lima", "Pune"]))
        if key not in current:
            rows.append(("+I", key, *row))
            current[key] = row
        elif rng.random() < 0.3:
            rows.append(("-D", key, *current.pop(key)))
        else:
            rows.append(("-U", key, *current[key]))
            rows.append(("+U", key, *row))
            current[key] = row
    frame = pd.DataFrame(rows, columns=["op", "id", "name", "city"])
    frame.insert(0, "seq", range(len(frame)))
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)


def replayed(frame: pd.DataFrame) -> set[tuple[Any, ...]]:
    """The changelog replayed by hand: per key the last +I/+U row, or nothing after -D."""
    state: dict[int, tuple[Any, ...]] = {}
    for row in frame.sort_values("seq").itertuples(index=False):
        if row.op in ("+I", "+U"):
            state[row.id] = (row.id, row.name, row.city)
        elif row.op == "-D":
            state.pop(row.id, None)
    return set(state.values())


def test_replay_changelog_gives_what_a_replay_by_hand_gives(t_env):
    frame = changes_frame()
    t_env.execute_sql(
        "CREATE TABLE changes (seq BIGINT, op STRING, id BIGINT, name STRING, city STRING)"
    ).wait()
    t_env.from_pandas(frame).execute_insert("changes").wait()

    replay_changelog(t_env, changes="changes", target="customers", key="id")

    got = {tuple(r) for r in t_env.from_path("customers").select("id", "name", "city").collect()}
    expected = replayed(frame)
    assert got == expected
    assert 10 < len(expected) < 40 and set(frame["op"]) == {"+I", "-U", "+U", "-D"}
    with pytest.raises(ValueError, match="no column 'ts'"):
        replay_changelog(t_env, changes="changes", target="other", key="id", order_by="ts")
