from __future__ import annotations

from django.apps import AppConfig


class FlightSqlConfig(AppConfig):
    name = "flightsql"
    verbose_name = "Arrow Flight SQL endpoint"
