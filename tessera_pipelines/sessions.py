"""Sessionize page views: ``(user_id, ts, url)`` → one row per visit.

A user's views belong to one session while each follows the previous one by at most
``gap_minutes``; a view more than ``gap_minutes`` after the previous one starts a new
session (the rule of Spark's ``session_window``, which tests/examples checks against).
The sessions are written as a new managed table by CTAS (``create_table`` with a query:
stage table, then one commit)::

    EXECUTE PIPELINE 'tessera_pipelines.sessions:sessionize'
        WITH ('source' = 'web.page_views', 'target' = 'web.sessions', 'gap_minutes' = '30')

The target has ``user_id``, ``session_no`` (1, 2, … per user in time order),
``session_start`` and ``session_end`` (first and last view), ``pages`` (views),
``distinct_urls``, ``entry_url`` and ``exit_url`` (first and last page) and
``duration_seconds``.
"""

from __future__ import annotations

from typing import Any

import tessera

from tessera_pipelines.args import positive_int, table_path

MAX_GAP_MINUTES = 7 * 24 * 60  # a week


def sessions_query(t_env: Any, source: str, gap_minutes: int) -> Any:
    """The sessions of ``source``'s page views as a lazy Table (nothing runs)."""
    views = t_env.from_path(source).select("user_id", "ts", "url")
    gap_micros = gap_minutes * 60 * 1_000_000
    # Window functions number the sessions: a view starts one when it is the user's first
    # or comes more than gap_minutes after the previous view (ties in ts: by url).
    query = f"""
        WITH views AS ({views.sql}),
        marked AS (
            SELECT user_id, ts, url,
                   CASE WHEN lag(ts) OVER w IS NULL
                          OR unix_micros(ts) - unix_micros(lag(ts) OVER w) > {gap_micros}
                        THEN 1 ELSE 0 END AS starts
            FROM views
            WINDOW w AS (PARTITION BY user_id ORDER BY ts, url)
        ),
        numbered AS (
            SELECT user_id, ts, url,
                   sum(starts) OVER (PARTITION BY user_id ORDER BY ts, url
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                       AS session_no
            FROM marked
        )
        SELECT user_id,
               CAST(session_no AS INT) AS session_no,
               min(ts) AS session_start,
               max(ts) AS session_end,
               count(*) AS pages,
               count(DISTINCT url) AS distinct_urls,
               min_by(url, struct(ts, url)) AS entry_url,
               max_by(url, struct(ts, url)) AS exit_url,
               unix_seconds(max(ts)) - unix_seconds(min(ts)) AS duration_seconds
        FROM numbered
        GROUP BY user_id, session_no
    """
    return t_env.sql_query(query)


def sessionize(t_env: Any, source: str = "", target: str = "", gap_minutes: str = "30") -> None:
    """Write the sessions of the page views in ``source`` to the new table ``target``.

    ``source`` needs columns ``user_id``, ``ts`` (TIMESTAMP) and ``url``; ``target`` must
    not exist yet (drop it, or give another name, to run again).
    """
    source = table_path("source", source)
    target = table_path("target", target)
    gap = positive_int("gap_minutes", gap_minutes, MAX_GAP_MINUTES)
    descriptor = (
        tessera.TableDescriptor.for_managed("parquet")
        .comment(f"Sessions of {source} (a new session after {gap} minutes without a view)")
        .build()
    )
    result = t_env.create_table(target, descriptor, query=sessions_query(t_env, source, gap))
    result.wait()
