from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs and workers"

    def ready(self) -> None:
        from jobs import worker  # noqa: F401  (connects the Celery worker signals)
