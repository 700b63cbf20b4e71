from __future__ import annotations

from django.apps import AppConfig


class HiveServer2Config(AppConfig):
    name = "hiveserver2"
    verbose_name = "HiveServer2 endpoint"
