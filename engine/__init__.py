"""The worker side of the statement pipeline: Spark sessions, plan registration, job runs.

Imports pyspark: only Celery workers import this package (``jobs.tasks`` does so lazily,
inside the task functions), never the web process.

- ``runtime``: the process-wide SparkSession and ``new_job_session()``.
- ``registration``: a plan's relations, functions and session properties in a session.
- ``control``: FAIR pool, job group/tag, cancel and progress of one job's Spark work.
- ``run``: ``run_job(job_id, worker)``: claim, execute, results, terminal transition.
- ``large_results``: a result above ``TESSERA_RESULT_MAX_ROWS`` (a statement's ``row_limit``)
  written batch by batch from Spark's Python workers, never collected in the driver.
- ``writes``: CTAS, INSERT and statement sets: analyse, write into staging, end the job
  (the commit runs in its FINISHED transition; FLIP-218).
- ``typing``: Spark's analyzer as ``ExpressionTyper`` and view-schema derivation.
- ``schema_check``: answering a catalog write that waits for Spark's analyzer (REST tables with
  expressions, views).
- ``errors``: Spark exceptions → a job's ``error`` (code + first line(s)).
"""
