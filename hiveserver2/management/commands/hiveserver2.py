"""``manage.py hiveserver2``: serve the HiveServer2 endpoint in this process until stopped
(``make run`` starts it beside the web server and the worker)."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from hiveserver2.server import HiveServer2

# Seconds a stopping server has to end its connections before the process exits regardless.
STOP_GRACE_SECONDS = 10


class Command(BaseCommand):
    help = "Serve the HiveServer2 (Thrift binary, SASL PLAIN) endpoint on TESSERA_HS2_PORT."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=None, help="default: TESSERA_HS2_PORT")
        parser.add_argument("--bind", default=None, help="default: TESSERA_HS2_BIND")

    def handle(self, *args: Any, **options: Any) -> None:
        port = settings.TESSERA_HS2_PORT if options["port"] is None else options["port"]
        if port == 0:
            self.stdout.write("HiveServer2 is off (TESSERA_HS2_PORT=0).")
            return
        server = HiveServer2(options["bind"], port)

        def stop(signum: int, frame: Any) -> None:
            server.stop()
            # A stop that hangs must not outlive Ctrl-C (CI saw this process stay after
            # SIGTERM): past the grace period the process ends anyway.
            timer = threading.Timer(STOP_GRACE_SECONDS, os._exit, args=(0,))
            timer.daemon = True
            timer.start()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write(f"HiveServer2 on {server.host}:{server.port} (Thrift binary, SASL PLAIN)")
        server.serve_forever()
