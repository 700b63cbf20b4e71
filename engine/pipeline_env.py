"""The in-worker ``TableEnvironment`` of a pipeline job (FLIP-32's second runtime).

The pipeline gets the SAME client classes as a remote program (``tessera.TableEnvironment``,
``Table``, ``TableResult``, ``StatementSet``) over another transport: ``InProcessHttp``
hands each REST call to the server's own view (``django.urls.resolve``) in this process,
authenticated as the job's user (DRF's forced authentication: no socket, no token), and
bound to the pipeline's session. Lists, ``use_catalog``, uploads and results behave
exactly as remote; a statement becomes a child job that runs at once in the pipeline's
SparkSession (``sessions.statements.INLINE``). What only the worker can do:
``Table.to_data_frame()`` is a live PySpark DataFrame (planned as a query in the session,
registered as a job's relations are, judged by the guard), and ``from_data_frame`` /
``create_temporary_view`` of a DataFrame of ``t_env.spark`` copy nothing
(``engine.dataframes``).
"""

from __future__ import annotations

import io
import json as jsonlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

import requests
from django.conf import settings
from django.test import RequestFactory
from django.urls import Resolver404, resolve
from pyspark.sql import DataFrame
from requests.structures import CaseInsensitiveDict
from tessera import Schema, Table, TableEnvironment
from tessera._http import Http
from tessera.errors import ValidationError, make_error
from tessera.sql import path_sql, quote_path, string_literal

from core.errors import CoreError
from core.planner import Action
from engine import dataframes, registration, sqlguard
from engine.monitor import job_properties
from jobs.models import Job, Session
from sessions import statements


class PipelineRun(Protocol):
    """What the environment needs of the running pipeline (``engine.pipeline``)."""

    job: Job
    spark: Any

    def check_running(self) -> None: ...


BASE_URL = "http://pipeline.tessera.invalid"


class InProcessHttp(Http):
    """``tessera._http.Http`` whose transport calls the REST views in this process."""

    def __init__(self, run: PipelineRun) -> None:
        super().__init__(BASE_URL)
        self.run = run
        self.user = run.job.user
        self._factory = RequestFactory()
        self._own_session = f"/api/v1/sessions/{run.job.session_id}"

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        self.run.check_running()  # a canceled or timed-out pipeline runs nothing more
        path = urlsplit(url).path
        if method.upper() == "DELETE" and path.rstrip("/") == self._own_session:
            raise ValidationError(
                "VALIDATION_ERROR", "A pipeline cannot close the session it runs in."
            )
        params = kwargs.get("params") or {}
        query = urlencode(params, doseq=True)
        headers = dict(kwargs.get("headers") or {})
        content_type = headers.pop("Content-Type", "application/json")
        body: bytes = b""
        if kwargs.get("json") is not None:
            body = jsonlib.dumps(kwargs["json"]).encode()
        elif kwargs.get("data") is not None:
            data = kwargs["data"]
            body = data if isinstance(data, bytes) else b"".join(data)
        extra = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
        request = self._factory.generic(
            method.upper(),
            f"{path}?{query}" if query else path,
            data=body,
            content_type=content_type,
            **extra,
        )
        request._force_auth_user = self.user  # type: ignore[attr-defined]
        try:
            match = resolve(path)
        except Resolver404:
            return _response(url, 404, {"Content-Type": "application/json"}, _not_found(path))
        answer: Any = match.func(request, *match.args, **match.kwargs)
        if hasattr(answer, "render"):
            answer.render()
        try:
            content = (
                b"".join(answer.streaming_content) if answer.streaming else bytes(answer.content)
            )
        finally:
            answer.close()
        return _response(url, answer.status_code, dict(answer.items()), content)

    def close(self) -> None:
        """Nothing to close."""


def _not_found(path: str) -> bytes:
    error = {"code": "NOT_FOUND", "message": f"No API endpoint at {path}."}
    return jsonlib.dumps({"error": error}).encode()


def _response(url: str, status: int, headers: dict[str, str], content: bytes) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.headers = CaseInsensitiveDict(headers)
    response._content = content
    response.raw = io.BytesIO(content)
    response.url = url
    response.encoding = "utf-8"
    return response


class WorkerTableEnvironment(TableEnvironment):
    """``tessera.TableEnvironment`` bound to a pipeline's session and SparkSession."""

    def __init__(self, http: InProcessHttp, session: dict[str, Any], run: PipelineRun) -> None:
        super().__init__(http, session)
        self._run = run
        #: The pipeline's SparkSession (the worker's, for the pipeline's own PySpark code).
        self.spark = run.spark

    def close(self) -> None:
        """The pipeline's session outlives its pipeline: nothing to do."""

    def _live_data_frame(self, table: Table) -> Any:
        """``table`` as a live DataFrame of the pipeline's SparkSession: planned as a query in
        the session (its catalog and database, temporary objects shadowing), its relations
        registered as a job's are (computed and metadata columns), the text judged by the
        guard; lazy, nothing copied."""
        self._run.check_running()
        session = Session.objects.get(pk=self.session_id)
        plan = statements.plan_in_session(session, table.sql)
        if plan.action != Action.QUERY:
            raise ValidationError(
                "VALIDATION_ERROR", "to_data_frame() takes a query (SELECT, WITH, VALUES)."
            )
        spark = self._run.spark
        registration.register_plan(
            spark,
            plan,
            job_properties(self._run.job),
            settings.TESSERA_UDF_PACKAGES,
            session.pk,
        )
        return sqlguard.guard(spark).sql(plan.sql, "query", None)

    # --- live DataFrames in (no copy: engine.dataframes) --------------------------

    def from_data_frame(self, spark_df: Any, schema: Schema | None = None) -> Table:
        """A Table over ``spark_df`` — a DataFrame of ``t_env.spark`` — without copying it:
        a hidden Spark temporary view of the pipeline's session, and a temporary table over
        it (``'connector' = 'dataframe'``) under a generated name, gone when the pipeline
        ends. ``schema``: its physical columns are taken by name and cast, its computed
        columns computed, as for any table."""
        if not isinstance(spark_df, DataFrame):
            return super().from_data_frame(spark_df, schema)
        return self.from_path(self._register_frame(spark_df, schema))

    def create_temporary_view(
        self, path: str, table_or_df: Any, schema: Schema | None = None
    ) -> None:
        """A temporary view at ``path``: over a Table as remote; over a DataFrame of
        ``t_env.spark`` without a copy (a view over ``from_data_frame``'s table, dropped
        with it when the pipeline ends); pandas and Arrow data are uploaded as remote."""
        if not isinstance(table_or_df, DataFrame):
            super().create_temporary_view(path, table_or_df, schema)
            return
        data = self._register_frame(table_or_df, schema)
        self._submit(f"CREATE TEMPORARY VIEW {path_sql(path)} AS SELECT * FROM {data}").wait()

    def _register_frame(self, frame: DataFrame, schema: Schema | None) -> str:
        """Hide ``frame`` as a Spark temporary view and declare the session's temporary
        table over it (a statement of the pipeline, planned and checked as any); the
        table's quoted path."""
        self._run.check_running()
        catalog, database = self._current_for("DataFrame data")
        path = quote_path([catalog, database, f"dataframe_{uuid.uuid4().hex[:16]}"])
        job_id = str(self._run.job.pk)
        try:
            hidden = dataframes.hide(self.spark, frame, job_id)
            elements = (
                ", ".join(schema.ddl_elements())
                if schema is not None
                else dataframes.spark_columns(frame)
            )
        except CoreError as exc:
            raise make_error(exc.code, exc.message, exc.details) from None
        options = {"connector": "dataframe", "view": hidden, "job": job_id}
        listed = ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in options.items())
        try:
            self._submit(f"CREATE TEMPORARY TABLE {path} ({elements}) WITH ({listed})").wait()
        except BaseException:
            self.spark.catalog.dropTempView(hidden)
            raise
        return path


@contextmanager
def environment(run: PipelineRun) -> Iterator[WorkerTableEnvironment]:
    """The ``t_env`` a pipeline function is called with."""
    http = InProcessHttp(run)
    session = http.get(f"/sessions/{run.job.session_id}")
    yield WorkerTableEnvironment(http, session, run)
