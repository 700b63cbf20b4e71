from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs and workers"

    def ready(self) -> None:
        from jobs import steps, worker
        from sessions import (
            analysis,
            bodies,
            quotas,
            uploads,  # worker: Celery worker signals
        )

        # What a job's transitions do besides its row (a write's commit, ANALYZE TABLE's
        # statistics, a script's next statement), in every process that moves jobs (web,
        # workers, the reaper): the one ordered list is jobs/steps.py.
        steps.install()
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
