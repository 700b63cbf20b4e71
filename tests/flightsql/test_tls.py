"""TLS on the Flight SQL port (``TESSERA_FLIGHT_SQL_TLS_CERT`` / ``_KEY``), with a self-signed
certificate made by ``openssl`` for the test (``cryptography`` is not in the venv): pyarrow.flight
and ADBC that trust it run a statement over ``grpc+tls://``; a plaintext client, a client that
trusts another certificate and one that trusts only the system's roots are refused by the
handshake, and the endpoint goes on serving; settings that do not fit stop it at start."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import adbc_driver_flightsql.dbapi as adbc
import pyarrow.flight as flight  # type: ignore[import-untyped]
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError

from flightsql.proto import FlightSql_pb2 as sql
from flightsql.server import FlightSqlServer
from tests.flightsql.test_clients import command
from tests.live_client import PASSWORD

TLS_ROOT_CERTS = "adbc.flight.sql.client_option.tls_root_certs"


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture(scope="module")
def pems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("tls")
    return {"server": self_signed(folder, "server"), "other": self_signed(folder, "other")}


@pytest.fixture
def tls_fsql(
    server: str, settings: Any, pems: dict[str, tuple[Path, Path]]
) -> Iterator[FlightSqlServer]:
    cert, key = pems["server"]
    settings.TESSERA_FLIGHT_SQL_TLS_CERT, settings.TESSERA_FLIGHT_SQL_TLS_KEY = str(cert), str(key)
    endpoint = FlightSqlServer("127.0.0.1", 0)
    thread = threading.Thread(target=endpoint.serve, daemon=True)
    thread.start()
    yield endpoint
    endpoint.shutdown()
    thread.join(10)


def select(client: flight.FlightClient, text: str) -> list[dict[str, Any]]:
    options = flight.FlightCallOptions(
        headers=[client.authenticate_basic_token("alice", PASSWORD)], timeout=60
    )
    info = client.get_flight_info(command(sql.CommandStatementQuery(query=text)), options)
    return list(client.do_get(info.endpoints[0].ticket, options).read_all().to_pylist())


def adbc_select(uri: str, text: str, **db_kwargs: str) -> list[tuple[Any, ...]]:
    kwargs = {"username": "alice", "password": PASSWORD, **db_kwargs}
    with adbc.connect(uri, db_kwargs=kwargs) as conn, conn.cursor() as cursor:
        cursor.execute(text)
        return list(cursor.fetchall())


@pytest.mark.slow
@pytest.mark.spark
def test_trusting_clients_run_statements_over_tls(
    tls_fsql: FlightSqlServer, pems: dict[str, tuple[Path, Path]]
) -> None:
    assert tls_fsql.scheme == "grpc+tls"
    uri = f"grpc+tls://127.0.0.1:{tls_fsql.port}"
    root = pems["server"][0].read_bytes()
    client = flight.FlightClient(uri, tls_root_certs=root)
    assert select(client, "SELECT 1 AS n") == [{"n": 1}]
    client.close()
    assert adbc_select(uri, "SELECT 1 AS n", **{TLS_ROOT_CERTS: root.decode()}) == [(1,)]


@pytest.mark.slow
@pytest.mark.spark
def test_plaintext_and_untrusting_clients_are_refused(
    tls_fsql: FlightSqlServer, pems: dict[str, tuple[Path, Path]]
) -> None:
    port = tls_fsql.port
    quick = flight.FlightCallOptions(timeout=15)
    attempts = [
        flight.FlightClient(f"grpc://127.0.0.1:{port}"),  # plaintext against the TLS port
        flight.FlightClient(  # trusts another certificate only
            f"grpc+tls://127.0.0.1:{port}", tls_root_certs=pems["other"][0].read_bytes()
        ),
        flight.FlightClient(f"grpc+tls://127.0.0.1:{port}"),  # the system's roots only
    ]
    for client in attempts:
        with pytest.raises(flight.FlightError) as refused:
            client.authenticate_basic_token("alice", PASSWORD, quick)
        assert not isinstance(refused.value, flight.FlightUnauthenticatedError)
        client.close()
    with pytest.raises(Exception):  # noqa: B017 - ADBC's error class is the driver's
        adbc_select(f"grpc://127.0.0.1:{port}", "SELECT 1")
    with pytest.raises(Exception):  # noqa: B017
        adbc_select(f"grpc+tls://127.0.0.1:{port}", "SELECT 1")
    other = pems["other"][0].read_text()
    with pytest.raises(Exception):  # noqa: B017
        adbc_select(f"grpc+tls://127.0.0.1:{port}", "SELECT 1", **{TLS_ROOT_CERTS: other})
    # The endpoint goes on serving a client that trusts it.
    trusting = flight.FlightClient(
        f"grpc+tls://127.0.0.1:{port}", tls_root_certs=pems["server"][0].read_bytes()
    )
    assert select(trusting, "SELECT 2 AS n") == [{"n": 2}]
    trusting.close()


def test_tls_settings_that_do_not_fit_stop_the_endpoint_at_start(
    settings: Any, pems: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    cert, key = (str(p) for p in pems["server"])
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("not a certificate\n")
    cases = [
        (cert, "", "TESSERA_FLIGHT_SQL_TLS_CERT is set but TESSERA_FLIGHT_SQL_TLS_KEY is not"),
        ("", key, "TESSERA_FLIGHT_SQL_TLS_KEY is set but TESSERA_FLIGHT_SQL_TLS_CERT is not"),
        (str(tmp_path / "missing.crt"), key, "TESSERA_FLIGHT_SQL_TLS_CERT=.* cannot be read"),
        (cert, str(not_pem), "TESSERA_FLIGHT_SQL_TLS_KEY=.* is not a PEM file"),
        (key, cert, "TESSERA_FLIGHT_SQL_TLS_CERT=.* is not a PEM file holding a certificate"),
    ]
    for cert_path, key_path, message in cases:
        settings.TESSERA_FLIGHT_SQL_TLS_CERT = cert_path
        settings.TESSERA_FLIGHT_SQL_TLS_KEY = key_path
        with pytest.raises(ImproperlyConfigured, match=message):
            FlightSqlServer("127.0.0.1", 0)
        # `manage.py flightsql` says it as a command error (exit status 1), serving nothing.
        with pytest.raises(CommandError, match=message):
            call_command("flightsql", "--port", "1")
    # A key that is not the certificate's: the endpoint does not start either.
    settings.TESSERA_FLIGHT_SQL_TLS_CERT = cert
    settings.TESSERA_FLIGHT_SQL_TLS_KEY = str(pems["other"][1])
    with pytest.raises(ImproperlyConfigured, match="is not the private key of"):
        FlightSqlServer("127.0.0.1", 0).shutdown()
