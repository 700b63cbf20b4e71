from __future__ import annotations

from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Workbench"
