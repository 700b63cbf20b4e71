"""The worker's Spark runtime (FLIP-32): where a job's Spark comes from, behind one seam.

Three runtimes, chosen from settings by ``current_runtime()``:

- ``local`` (``SPARK_MASTER=local[…]``, the default): the worker launches its own driver
  JVM, which executes everything in-process.
- ``cluster`` (any other ``SPARK_MASTER``: ``spark://…``, ``yarn``, ``k8s://…``): the
  worker's driver JVM schedules executors elsewhere; the allow-listed UDF packages are
  shipped to them, and ``check_storage`` is where the storage must prove reachable.
- ``connect`` (``SPARK_REMOTE=sc://…``): execution goes to a Spark Connect server. The
  worker still launches a small classic JVM (``local[1]``, UI off, no work scheduled on
  it): it is the SQL guard's parser and lexer (``engine.sqlguard``) and answers how
  Hadoop reads a path (``engine.locations``), so the guard keeps judging Spark's own
  parse. The server must run the same Spark version as the worker's PySpark (the same
  parser); otherwise every job fails ``UNSUPPORTED`` saying so.

``engine.spark_session`` keeps the process's engine (``Engine``: the classic session and,
on Connect, the remote one) and watches the classic JVM; ``control`` asks the runtime how
to tag, cancel and follow a job. What a runtime cannot do is ``UnsupportedRuntime``
(``UNSUPPORTED``) with a message naming the runtime (``Runtime.unsupported``).
"""

from __future__ import annotations

import logging
import os
import socket
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import urlsplit

from django.conf import settings
from pyspark.sql import SparkSession

from engine import spark_config
from engine.errors import EngineLost, UnsupportedRuntime
from engine.storage_check import check_shared_storage, storage_to_check

log = logging.getLogger(__name__)

# The Connect runtime's parser JVM: it parses and describes statements, nothing runs on it.
PARSER_MASTER = "local[1]"
PARSER_MEMORY = "512m"
# How long the worker tries to reach the Connect server before a job fails ENGINE_LOST
# (PySpark's own retry policy waits up to ten minutes).
CONNECT_TIMEOUT_SECONDS = 5.0
CONNECT_RETRIES = 4
CONNECT_MAX_BACKOFF_MS = 2_000
# gRPC shares connections (subchannels) between channels to the same address, and with them
# their reconnect back-off: after a lost server, a new client would wait out the old
# channel's back-off (up to two minutes) and fail ENGINE_LOST although the server is back.
# Each client gets its own subchannels, and gRPC tries again within a second or two.
CONNECT_CHANNEL_OPTIONS = [
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", CONNECT_MAX_BACKOFF_MS),
]
# SQL settings that change how Spark's parser reads a statement: the parser session holds
# the Connect session's values (read when the job's session is made; the job's own
# properties are set on both, ``mirror_conf``).
PARSER_CONF_KEYS = (
    "spark.sql.ansi.enabled",
    "spark.sql.ansi.enforceReservedKeywords",
    "spark.sql.ansi.doubleQuotedIdentifiers",
    "spark.sql.parser.escapedStringLiterals",
    "spark.sql.parser.quotedRegexColumnNames",
    "spark.sql.legacy.setopsPrecedence.enabled",
    "spark.sql.legacy.exponentLiteralAsDecimal.enabled",
    "spark.sql.legacy.allowNegativeScaleOfDecimal",
    "spark.sql.legacy.createHiveTableByDefault",
    "spark.sql.legacy.identifierClause",
    "spark.sql.legacy.parameterSubstitution.constantsOnly",
    "spark.sql.variable.substitute",
)


# How often a Connect server reports a job's stages to the worker (a session setting).
PROGRESS_REPORT_INTERVAL = "200ms"


@dataclass(eq=False)
class Engine:
    """What a worker process runs jobs with: the classic session on the JVM it launched
    (executing on ``local``/``cluster``; only parsing on ``connect``) and, on ``connect``,
    the Spark Connect client session (``None`` until connected, and again after the server
    was lost)."""

    classic: SparkSession
    remote: SparkSession | None = None

    @property
    def executing(self) -> SparkSession | None:
        return self.remote if self.remote is not None else self.classic


class Runtime(ABC):
    """One way of getting Spark. ``name`` is what logs and errors say."""

    name: ClassVar[str]
    # Executes over Spark Connect: no SparkContext in this process for the job's work.
    remote: ClassVar[bool] = False
    # A per-user FAIR pool can be set for a job's Spark work.
    pools: ClassVar[bool] = True

    @property
    @abstractmethod
    def title(self) -> str:
        """How messages name it: "the Spark Connect runtime (sc://…)"."""

    def unsupported(self, what: str) -> UnsupportedRuntime:
        """The error for something Spark cannot do on this runtime."""
        return UnsupportedRuntime(
            f"{what} is not possible on {self.title}; nothing was run.",
            details={"runtime": self.name},
        )

    # --- the classic JVM this process launches -------------------------------------------

    @abstractmethod
    def start_classic(self) -> SparkSession:
        """Launch the driver JVM of this process and return its session."""

    def after_start(self, spark: SparkSession) -> None:
        """Once the classic session is up (log level; UDF packages on a cluster)."""
        spark.sparkContext.setLogLevel("WARN")

    def check_storage(self, spark: SparkSession) -> None:
        """At worker start, once Spark is up: can the executors reach the storage roots and
        the warehouse? Local mode has nothing to check (the executors are this JVM)."""
        log.debug("%s runtime: no storage check at start (%s)", self.name, type(spark).__name__)

    # --- Spark Connect ---------------------------------------------------------------------

    def connect(self) -> SparkSession:
        """The remote session (only the Connect runtime has one)."""
        raise self.unsupported("Spark Connect")

    def job_sessions(self, engine: Engine) -> tuple[SparkSession, SparkSession]:
        """A job's isolated session and the classic session whose parser judges its text
        (the same one except on Connect)."""
        session = engine.classic.newSession()
        return session, session


class LocalRuntime(Runtime):
    name: ClassVar[str] = "local"

    @property
    def title(self) -> str:
        return f"the local Spark runtime ({settings.SPARK_MASTER})"

    def start_classic(self) -> SparkSession:
        log.info(
            "starting Spark (%s runtime: master %s, driver memory %s)",
            self.name,
            settings.SPARK_MASTER,
            spark_config.driver_memory(),
        )
        spark: SparkSession = spark_config.classic_builder(settings.SPARK_MASTER).getOrCreate()
        return spark


class ClusterRuntime(LocalRuntime):
    """A standalone, YARN or Kubernetes master (``SPARK_MASTER``)."""

    name: ClassVar[str] = "cluster"

    @property
    def title(self) -> str:
        return f"the Spark cluster runtime ({settings.SPARK_MASTER})"

    def after_start(self, spark: SparkSession) -> None:
        super().after_start(spark)
        sc: Any = spark.sparkContext
        # Once per SparkContext: a start whose storage check failed gets the same context
        # next time, and Spark refuses a second file of the same name.
        if not getattr(sc, "_tessera_udfs_shipped", False):
            spark_config._ship_udf_packages(spark)
            sc._tessera_udfs_shipped = True

    def check_storage(self, spark: SparkSession) -> None:
        """The executors must write where this worker commits and read what it checked
        (``engine.storage_check``; ``STORAGE_UNREACHABLE`` otherwise)."""
        check_shared_storage(
            spark,
            storage_to_check(settings.WAREHOUSE_DIR, settings.TESSERA_STORAGE_ROOTS),
            f"cluster {settings.SPARK_MASTER}",
        )


class ConnectRuntime(Runtime):
    """``SPARK_REMOTE``: jobs execute on a Spark Connect server; a small local JVM parses."""

    name: ClassVar[str] = "connect"
    remote: ClassVar[bool] = True
    pools: ClassVar[bool] = False

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def title(self) -> str:
        return f"the Spark Connect runtime ({self.shown_url})"

    @property
    def shown_url(self) -> str:
        """The server's address without parameters (a token may be one)."""
        return self.url.split(";", 1)[0].rstrip("/")

    def address(self) -> tuple[str, int]:
        parts = urlsplit(self.url.split(";", 1)[0])
        if parts.scheme != "sc" or not parts.hostname:
            raise self.unsupported(f"The SPARK_REMOTE address '{self.shown_url}'")
        return parts.hostname, parts.port or 15002

    def start_classic(self) -> SparkSession:
        """The parser JVM: a classic SparkContext made directly (PySpark's builder would
        connect to ``SPARK_REMOTE`` instead), in PySpark's "local remote" mode, which lets
        a classic context live beside Connect clients in one process."""
        from pyspark import SparkConf, SparkContext

        # Column functions (``pyspark.sql.functions``) must build Connect columns here;
        # PySpark marks a process that hosts a classic JVM beside them "local remote".
        os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
        os.environ["SPARK_LOCAL_REMOTE"] = "1"
        # spark-submit would refuse a master next to an inherited SPARK_REMOTE: the setting
        # (settings.SPARK_REMOTE) is what this process goes by from here on.
        os.environ.pop("SPARK_REMOTE", None)
        options = spark_config.classic_options(PARSER_MASTER, PARSER_MEMORY)
        options.update(
            {
                "spark.app.name": "tessera-worker-parser",
                "spark.sql.shuffle.partitions": "1",
                "spark.scheduler.mode": "FIFO",
            }
        )
        log.info(
            "starting Spark's parser JVM (%s runtime: %s, %s)",
            self.name,
            PARSER_MASTER,
            PARSER_MEMORY,
        )
        context = SparkContext(conf=SparkConf().setAll(list(options.items())))
        session: SparkSession = SparkSession(context)
        return session

    def connect(self) -> SparkSession:
        """A client session on the Connect server, checked: reachable within
        ``CONNECT_TIMEOUT_SECONDS`` (``ENGINE_LOST`` if not), the same Spark version as
        this worker's PySpark, and a local default file system (``UNSUPPORTED`` if not)."""
        from pyspark import __version__ as client_version

        host, port = self.address()
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS).close()
        except OSError as exc:
            raise EngineLost(
                f"The Spark Connect server at {self.shown_url} cannot be reached ({exc}); "
                "nothing was run. Start it, or fix SPARK_REMOTE.",
                details={"runtime": self.name},
            ) from None
        remote = self._new_remote()
        try:
            version = str(remote.version)
        except Exception as exc:
            close_remote(remote)
            raise EngineLost(
                f"The Spark Connect server at {self.shown_url} does not answer "
                f"({type(exc).__name__}); nothing was run.",
                details={"runtime": self.name},
            ) from None
        if version != client_version:
            close_remote(remote)
            raise UnsupportedRuntime(
                f"The Spark Connect server at {self.shown_url} runs Spark {version}, but this "
                f"worker's PySpark is {client_version}: the worker checks every statement "
                "with its own copy of Spark's parser, which must be the server's. Run the "
                "same Spark version on both; nothing was run.",
                details={"runtime": self.name, "server": version, "client": client_version},
            )
        default_fs = str(remote.conf.get("spark.hadoop.fs.defaultFS", "file:///") or "")
        if not default_fs.startswith("file:"):
            close_remote(remote)
            raise self.unsupported(
                f"A Spark Connect server whose default file system is '{default_fs}' (the "
                "storage roots and the warehouse are local paths shared with the server)"
            )
        log.info("connected to Spark %s at %s", version, self.shown_url)
        connected: SparkSession = remote
        return connected

    def _new_remote(self) -> Any:
        """A new Spark Connect session on the server (its own session id and channel),
        retrying a lost server only briefly."""
        from pyspark.sql.connect.client import DefaultChannelBuilder
        from pyspark.sql.connect.session import SparkSession as RemoteSession

        channel = DefaultChannelBuilder(self.url, channelOptions=CONNECT_CHANNEL_OPTIONS)
        remote: Any = RemoteSession.builder.channelBuilder(channel).create()
        bounded_retries(remote)
        return remote

    def check_storage(self, spark: SparkSession) -> None:
        """The server's executors must write where this worker commits and read what it
        checked (``engine.storage_check``; ``STORAGE_UNREACHABLE`` otherwise)."""
        check_shared_storage(
            spark,
            storage_to_check(settings.WAREHOUSE_DIR, settings.TESSERA_STORAGE_ROOTS),
            f"Spark Connect {self.shown_url}",
        )

    def job_sessions(self, engine: Engine) -> tuple[SparkSession, SparkSession]:
        if engine.remote is None:
            raise EngineLost(
                f"This worker is not connected to the Spark Connect server at "
                f"{self.shown_url}; nothing was run.",
                details={"runtime": self.name},
            )
        # A server-side session of the job's own (PySpark 4.2's Connect client has no
        # newSession(): each create() opens a session, and a channel, of its own).
        session: Any = self._new_remote()
        # Released on the server when the job's session is dropped (no run.py hook needed).
        weakref.finalize(session, _release, session.client)
        # The server reports a running operation's stages every 2 s by default, so a job
        # shorter than that had no progress at all; the monitor reads it every second.
        session.conf.set("spark.connect.progress.reportInterval", PROGRESS_REPORT_INTERVAL)
        parser = engine.classic.newSession()
        # The Connect session starts from the server's defaults: the parser reads the
        # statement under the same parser settings.
        values = dict(session.conf.getAll)
        for key in PARSER_CONF_KEYS:
            if key in values and key != "spark.sql.variable.substitute":
                parser.conf.set(key, values[key])
        return session, parser


def bounded_retries(remote: Any) -> None:
    """PySpark's client retries an unreachable server for up to ten minutes: a worker gives
    up after a few seconds (the job fails ENGINE_LOST; the next job connects again)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    remote.client.set_retry_policies(
        [DefaultPolicy(max_retries=CONNECT_RETRIES, max_backoff=CONNECT_MAX_BACKOFF_MS)]
    )


def _release(client: Any) -> None:
    try:
        client.release_session()
    except Exception:
        log.debug("releasing a Spark Connect session failed", exc_info=True)
    try:
        client.close()
    except Exception:
        log.debug("closing a Spark Connect client failed", exc_info=True)


def close_remote(remote: Any) -> None:
    """Close a Connect client without ``stop()``: in "local remote" mode, ``stop()`` would
    also stop this process's classic session (the parser)."""
    _release(remote.client)


def is_remote_session(spark: Any) -> bool:
    """A Spark Connect client session (no SparkContext, no py4j)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


@lru_cache(maxsize=4)
def _runtime_for(remote: str, master: str) -> Runtime:
    if remote:
        return ConnectRuntime(remote)
    if master.startswith("local"):
        return LocalRuntime()
    return ClusterRuntime()


def current_runtime() -> Runtime:
    """The runtime the settings choose: ``SPARK_REMOTE`` set → connect; ``SPARK_MASTER``
    starting with ``local`` → local; anything else → cluster."""
    return _runtime_for(str(settings.SPARK_REMOTE or ""), str(settings.SPARK_MASTER or "local"))
