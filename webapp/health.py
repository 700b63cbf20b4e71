"""GET /api/v1/health: readiness of the database and the broker, and live workers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import dispatch
from webapp.errors import ErrorDetailOut, error_body

log = logging.getLogger(__name__)


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def check_broker() -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".health"
        probe.write_text("ok")
        probe.unlink()
        return
    from kombu.connection import Connection

    with Connection(url, connect_timeout=2) as conn:  # type: ignore[no-untyped-call]
        conn.ensure_connection(max_retries=1, timeout=2)


@extend_schema_serializer(component_name="Health")
class HealthOut(serializers.Serializer[Any]):
    status = serializers.CharField()
    database = serializers.CharField()
    broker = serializers.CharField()
    workers = serializers.IntegerField()


class HealthUnavailableOut(HealthOut):
    # The 503 answer: the same fields and the contract's error (the operation's description).
    error = ErrorDetailOut()


class HealthView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(
        auth=[],
        responses=HealthOut,
        description="Ready: status ok, database and broker ok, the number of live workers. "
        "Not ready: 503 with the same fields (status unavailable; a part that cannot be "
        "reached says why) and the error envelope, code UNAVAILABLE.",
    )
    def get(self, request: Request) -> Response:
        parts: dict[str, Any] = {}
        failing: list[str] = []
        for name, check in (("database", check_database), ("broker", check_broker)):
            try:
                check()
                parts[name] = "ok"
            except Exception as exc:
                log.warning("health: %s check failed: %s", name, exc)
                parts[name] = f"error: {type(exc).__name__}: {exc}"
                failing.append(name)
        workers = 0
        if "database" not in failing:
            workers = dispatch.live_worker_count()
        if failing:
            body = error_body(
                "UNAVAILABLE",
                f"Not ready: the {' and the '.join(failing)} cannot be reached.",
                {**parts, "workers": workers},
            )
            unavailable = {"status": "unavailable", **parts, "workers": workers, **body}
            return Response(HealthUnavailableOut(unavailable).data, status=503)
        return Response(HealthOut({"status": "ok", **parts, "workers": workers}).data)
