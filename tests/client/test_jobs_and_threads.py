"""Jobs that fail later are returned (PyFlink's ``TableResult``), refusals raise at once;
the server's 429 retried by the client; one TableEnvironment shared by threads."""

from __future__ import annotations

import threading
import time

import pytest

from tests.client.conftest import connect_as, tessera

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_a_query_that_fails_while_it_runs_is_returned_and_raises_when_read(t_env):
    result = t_env.execute_sql("SELECT 1 / (id - 1) AS x FROM range(3)")  # ANSI: divide by 0
    assert result.status == "FAILED"
    with pytest.raises(tessera.JobFailedError) as failed:
        result.wait()
    assert failed.value.job_id == result.job_id and "DIVIDE_BY_ZERO" in str(failed.value)
    with pytest.raises(tessera.JobFailedError):
        list(result.collect())
    with pytest.raises(tessera.JobFailedError):
        result.to_pandas()
    # A Table's execute() is the same.
    assert t_env.sql_query("SELECT 1 / 0 AS x").execute().status == "FAILED"


def test_an_insert_that_fails_while_it_runs_is_returned(t_env):
    t_env.execute_sql("CREATE TABLE nums (n BIGINT)").wait()
    result = t_env.sql_query("SELECT CAST('x' AS BIGINT) AS n").execute_insert("nums")
    with pytest.raises(tessera.JobFailedError):
        result.wait()
    assert result.status == "FAILED" and result.job["kind"] == "insert"


def test_refusals_and_failing_commands_still_raise_at_once(t_env):
    with pytest.raises(tessera.ParseError):
        t_env.execute_sql("SELEC 1")
    with pytest.raises(tessera.errors.NotFound):
        t_env.execute_sql("SELECT * FROM no_such_table")
    with pytest.raises(tessera.AlreadyExistsError):
        t_env.execute_sql("CREATE TABLE orders (a INT)")


def test_the_servers_429_is_typed_and_retried_after_its_retry_after(shop, settings):
    settings.TESSERA_USER_QUEUED_JOBS = 1
    with connect_as(shop, "alice", catalog="shop", database="sales") as env:
        env.statement_wait = 0
        long_job = env.execute_sql("SELECT count(*) FROM range(100000000000)")
        impatient = connect_as(shop, "alice", retry=tessera.NO_RETRY)
        try:
            with pytest.raises(tessera.errors.TooManyJobs) as refused:
                impatient.execute_sql("SELECT 1")
            assert refused.value.retry_after == 5
            assert isinstance(refused.value, tessera.errors.TooManyRequests)
        finally:
            impatient.close()
        threading.Timer(1.0, long_job.cancel).start()
        started = time.monotonic()
        env.statement_wait = 10
        assert [tuple(r) for r in env.execute_sql("SELECT 1").collect()] == [(1,)]
        assert time.monotonic() - started >= 4.5  # waited for Retry-After, not at once
        assert long_job.status == "CANCELED"


def test_three_threads_share_one_environment(t_env):
    failures: list[BaseException] = []
    answers: dict[int, list[int]] = {0: [], 1: [], 2: []}

    def work(thread: int) -> None:
        try:
            for i in range(30):
                rows = list(t_env.execute_sql(f"SELECT {thread * 100 + i} AS n").collect())
                answers[thread].append(rows[0].n)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failures == []
    assert answers == {n: [n * 100 + i for i in range(30)] for n in range(3)}


def test_create_table_refuses_computed_columns_that_could_never_be_read(t_env):
    with pytest.raises(tessera.ValidationError, match="calls an aggregate function"):
        t_env.execute_sql("CREATE TABLE t (a INT, s AS sum(a))")
    with pytest.raises(tessera.ValidationError) as error:
        t_env.execute_sql("CREATE TABLE t (a INT, b AS a + 1, c AS b * 2)")
    assert "Computed column `c` refers to computed column `b`" in error.value.message
    assert error.value.details["refers_to"] == "b"
    assert "t" not in t_env.list_tables()
