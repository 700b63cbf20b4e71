from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs and workers"

    def ready(self) -> None:
        from jobs import ctas, services, worker  # worker: connects the Celery worker signals

        # A script's next statement starts when the one before it ends, in whichever
        # process (web or worker) ended it: the hook must be there in both.
        services.install_hooks()
        # Writes (FLIP-218): stage tables, commit and clean-up, in every process that moves
        # jobs (web, workers, the reaper).
        ctas.install_hooks()
        del worker
