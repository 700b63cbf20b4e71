from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs and workers"

    def ready(self) -> None:
        from jobs import worker
        from sessions import (
            analysis,
            bodies,
            quotas,
            scripts,
            uploads,  # worker: Celery worker signals
        )
        from tabledata import hooks, statistics_hooks

        # A script's next statement starts when the one before it ends, in whichever
        # process (web or worker) ended it: the hook must be there in both.
        scripts.install_hooks()
        # Writes (FLIP-218): stage tables, commit and clean-up, in every process that moves
        # jobs (web, workers, the reaper).
        hooks.install_hooks()
        # ANALYZE TABLE: the figures reach the table inside the job's FINISHED transition.
        statistics_hooks.install_hooks()
        # The catalog asks a worker's Spark analyzer before it stores a schema with
        # expressions or a view's (FLIP-164), without knowing jobs.
        analysis.install_analyzer()
        # The catalog plans a view's query or a SQL function's body with the rights of whoever
        # stores it, gives it or receives it (ADR 0012), without knowing jobs.
        bodies.install_reach()
        # An upload's files go when its row (or its session's) is deleted, in any process.
        uploads.install_hooks()
        # GET /users/me shows the user's quotas and their use, without accounts knowing jobs.
        quotas.install_usage()
        del worker
