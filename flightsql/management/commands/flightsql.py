"""``manage.py flightsql``: serve the Arrow Flight SQL endpoint in this process until stopped
(``make run`` starts it beside the web server, the worker and HiveServer2). TLS settings that
do not fit (one of the two alone, a file that is not PEM) stop it at start with their reason."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from flightsql.server import FlightSqlServer


class Command(BaseCommand):
    help = "Serve the Arrow Flight SQL endpoint on TESSERA_FLIGHT_SQL_PORT."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--port", type=int, default=None, help="default: TESSERA_FLIGHT_SQL_PORT"
        )
        parser.add_argument("--bind", default=None, help="default: TESSERA_FLIGHT_SQL_BIND")

    def handle(self, *args: Any, **options: Any) -> None:
        port = settings.TESSERA_FLIGHT_SQL_PORT if options["port"] is None else options["port"]
        if port == 0:
            self.stdout.write("Flight SQL is off (TESSERA_FLIGHT_SQL_PORT=0).")
            return
        try:
            server = FlightSqlServer(options["bind"], port)
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
        stopping = threading.Event()

        def stop(signum: int, frame: Any) -> None:
            stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write(f"Arrow Flight SQL on {server.scheme}://{server.host}:{server.port}")
        threading.Thread(target=server.serve, name="flight-sql", daemon=True).start()
        while not stopping.wait(0.5):
            pass
        server.shutdown()
