"""``manage.py engine_host``: one engine process, started by a worker's engine pool
(``engine.pool``) with one end of a socket pair; not a command to run by hand."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run one engine (a Spark application) for the worker that started this process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fd", type=int, required=True, help="the worker's socket")
        parser.add_argument("--engine", required=True, help="the Engine row's id")
        parser.add_argument("--identity", required=True, help="the worker's identity")

    def handle(self, *args: Any, **options: Any) -> None:
        from engine import host  # pyspark: only in the engine process

        host.main(options["fd"], options["engine"], options["identity"])
