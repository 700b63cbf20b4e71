from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs and workers"

    def ready(self) -> None:
        from catalog import signals
        from jobs import dispatch, scripts, worker, write_hooks  # worker: Celery worker signals

        # A script's next statement starts when the one before it ends, in whichever
        # process (web or worker) ended it: the hook must be there in both.
        scripts.install_hooks()
        # Writes (FLIP-218): stage tables, commit and clean-up, in every process that moves
        # jobs (web, workers, the reaper).
        write_hooks.install_hooks()
        # The catalog asks for a worker to type a table's expressions without knowing jobs.
        signals.expressions_untyped.connect(
            dispatch.request_expression_typing, dispatch_uid="jobs.dispatch"
        )
        del worker
