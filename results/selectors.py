"""Reads of a job's result: its pages (sorted, filtered), its chart and its downloads, from
the results store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core import jobstate
from core.errors import CoreError, NotFound
from jobs import notify
from jobs.errors import ResultNotReady
from jobs.models import Job
from jobs.selectors import hold_until, reload_job
from results import arrow, partial, queries, store
from tabledata.stream_commit import is_streaming


def _stream_preview(job: Job) -> bool:
    """A streaming SELECT's result is its latest tail: readable while it runs, and after
    it was stopped (docs/streaming.md, "Preview")."""
    if not job.result or job.status in (jobstate.CREATED, jobstate.FINISHED):
        return False
    try:
        plan = job.typed_plan
    except (KeyError, TypeError, ValueError):
        return False
    return plan is not None and not plan.writes and is_streaming(plan)


def _writing(job: Job) -> dict[str, Any] | None:
    """The progress of a result the job is writing now (``partial.read_progress``): None when
    the job has ended or has written no batch yet."""
    if job.status not in (jobstate.CREATED, jobstate.RUNNING):
        return None
    return partial.read_progress(job.pk)


def wait_for_rows(job: Job, rows: int, seconds: float) -> Job:
    """The job once it has ended or written at least ``rows`` rows of its result, or when
    ``seconds`` passed (woken by its ``rows`` and ``ended`` notifications)."""

    def read() -> Job:
        return reload_job(job.pk)

    def done(current: Job) -> bool:
        if current.status in jobstate.TERMINAL or _stream_preview(current):
            return True
        progress = _writing(current)
        return progress is not None and int(progress["rows"]) >= rows

    return hold_until(
        job, read, done, job_ids=[job.pk], kinds=(notify.ROWS, notify.ENDED), seconds=seconds
    )


def require_result(job: Job) -> dict[str, Any]:
    if _stream_preview(job):
        return dict(job.result or {})
    if job.status in (jobstate.CREATED, jobstate.RUNNING):
        raise ResultNotReady(
            f"Job {job.pk} is {job.status}; its result can be read once it has FINISHED.",
            details={"status": job.status},
        )
    if job.status != jobstate.FINISHED or not job.result:
        raise NotFound(f"Job {job.pk} ended {job.status} and has no result.")
    return dict(job.result)


@dataclass(frozen=True)
class ResultPage:
    """One page of a job's result: its columns, the rows, and the offset of the next page
    (None: this is the last one)."""

    columns: list[dict[str, Any]]
    rows: list[list[Any]]
    next: int | None
    row_count: int = 0  # rows of the whole (sorted, filtered) result
    complete: bool = True  # False: the job still writes its result; more rows may come


def job_result_page(
    *,
    job: Job,
    after: Any,
    limit: int,
    offset: str | None = None,
    sort: str | None = None,
    filters: Sequence[str] = (),
    wait: float = 0.0,
) -> ResultPage:
    """A page of the job's result from the results store: from ``offset`` (a row number) or
    the ``after`` of a page token, of the whole result or of it sorted and filtered. While
    the job writes its result, the rows written so far (``complete`` False), after waiting
    up to ``wait`` seconds for the page's rows to be written or the job to end."""
    start = _page_start(after, offset)
    if wait > 0 and job.status in (jobstate.CREATED, jobstate.RUNNING):
        job = wait_for_rows(job, start + limit, wait)
    progress = _writing(job)
    if progress is not None and not _stream_preview(job):
        return _written_page(job, progress, start, limit, sort, filters)
    meta = require_result(job)
    columns = list(meta.get("columns", []))
    view = queries.parse_view(sort, filters, [c["name"] for c in columns])
    if view.plain:
        rows, following = store.read_page(job.pk, start, limit)
        count = int(meta.get("row_count", 0))
    else:
        rows, following, count = queries.read_view_page(job.pk, view, start, limit)
    return ResultPage(columns=columns, rows=rows, next=following, row_count=count)


def _written_page(
    job: Job,
    progress: dict[str, Any],
    start: int,
    limit: int,
    sort: str | None,
    filters: Sequence[str],
) -> ResultPage:
    """A page of the rows a running job has written so far: the next page is always there
    (more rows may come), ``row_count`` counts the rows written."""
    columns = list(progress["columns"])
    view = queries.parse_view(sort, filters, [c["name"] for c in columns])
    if not view.plain:
        raise ResultNotReady(
            f"Job {job.pk} is {job.status}; a sorted or filtered page needs the whole "
            "result, once it has FINISHED (without sort and filter, the rows written so far "
            "can be read now).",
            details={"status": job.status},
        )
    table, _ = partial.read_written(job.pk)
    if table is None:  # the job ended (and its partial file went) since the progress mark
        return job_result_page(job=reload_job(job.pk), after=None, limit=limit, offset=str(start))
    page = table.slice(start, limit)
    return ResultPage(
        columns=columns,
        rows=store.json_rows(page),
        next=start + page.num_rows,
        row_count=table.num_rows,
        complete=False,
    )


def _page_start(after: Any, offset: str | None) -> int:
    start = 0
    if after is not None:
        if type(after) is not int or after < 0:
            raise CoreError(
                "The page_token is not one this server issued; start again without it.",
                details={"field": "page_token"},
            )
        start = after
    if offset not in (None, ""):
        try:
            start = int(str(offset))
        except ValueError:
            start = -1
        if start < 0:
            raise CoreError(
                f"offset must be a whole number of rows, 0 or more, got '{str(offset)[:50]}'.",
                details={"field": "offset"},
            )
    return start


def job_result_chart(
    *,
    job: Job,
    x: str | None,
    y: Sequence[str],
    aggregation: str | None,
    points: str | None,
    filters: Sequence[str] = (),
) -> dict[str, Any]:
    """A chart's points over the job's whole (filtered) result, aggregated by X."""
    meta = require_result(job)
    names = [c["name"] for c in meta.get("columns", [])]
    view = queries.parse_view(None, filters, names)
    chart = queries.parse_chart(x, y, aggregation, points, names)
    return queries.chart_data(job.pk, view, chart)


def job_result_download(
    *,
    job: Job,
    fmt: str,
    sort: str | None = None,
    filters: Sequence[str] = (),
    name: str | None = None,
    wait: float = 0.0,
) -> Any:
    """The whole result as a file, or its rows sorted and filtered as a result page's
    ``sort`` and ``filter`` ask (the grid as shown), named after ``name`` when given.
    ``arrow`` of a job that is writing its result (waited for up to ``wait`` seconds to
    start): its batches as they are written, until the job ends (``arrow.follow_response``)."""
    if fmt == "arrow" and wait > 0 and job.status in (jobstate.CREATED, jobstate.RUNNING):
        job = wait_for_rows(job, 1, wait)
    progress = _writing(job) if fmt == "arrow" else None
    if progress is not None and not _stream_preview(job):
        if sort or filters or name:
            raise CoreError(
                "result.arrow is the stored result as it is: sort, filter and name apply "
                "to the csv, json and parquet downloads.",
                details={"field": "sort" if sort else "filter" if filters else "name"},
            )
        return arrow.follow_response(job.pk, job.user_id)
    meta = require_result(job)
    names = [c["name"] for c in meta.get("columns", [])]
    view = queries.parse_view(sort, filters, names)
    if fmt == "arrow":
        if not view.plain or name:
            field = "name" if view.plain else "sort" if view.sort else "filter"
            raise CoreError(
                "result.arrow is the stored result as it is: sort, filter and name apply "
                "to the csv, json and parquet downloads.",
                details={"field": field},
            )
        return arrow.arrow_response(job.pk, meta)
    table = None if view.plain else queries.view_table(job.pk, view)
    return store.download_response(job.pk, fmt, table=table, name=name)
