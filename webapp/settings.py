"""Django settings, read from the environment (see docs/api.md §1 and README.md).

Embedded defaults need no server: SQLite and a file-system Celery broker, both under
``TESSERA_DATA_DIR``. ``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL/Redis.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext

from core.durations import parse_seconds

# Lets admin.ModelAdmin[Model] and friends be subscripted at run time, as the type stubs expect.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str, sep: str = ",") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(sep) if item.strip()]


DATA_DIR = Path(os.environ.get("TESSERA_DATA_DIR", BASE_DIR / "var")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

# Managed tables live here, one directory per table; DROP deletes it.
WAREHOUSE_DIR = DATA_DIR / "warehouse"
# External tables must point under one of these directories (colon-separated).
TESSERA_STORAGE_ROOTS = [
    Path(p).resolve()
    for p in _env_list("TESSERA_STORAGE_ROOTS", str(DATA_DIR / "external"), sep=os.pathsep)
]


def _secret_key() -> str:
    key = os.environ.get("DJANGO_SECRET_KEY")
    if key:
        return key
    # Embedded default: one random key per data dir, kept so sessions survive restarts.
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DJANGO_DEBUG")
ALLOWED_HOSTS = _env_list("TESSERA_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = _env_list("TESSERA_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "audit",
    "catalog",
    "jobs",
    "workbench",
    "schedules",
    "dashboards",
    "hiveserver2",
    "flightsql",
]

MIDDLEWARE = [
    "webapp.middleware.RequestLimitsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database() -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'tessera.sqlite3'}"
    config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=60))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # The web server and the worker share the file: wait for locks instead of failing.
        config["OPTIONS"] = {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        config["CONN_MAX_AGE"] = 0
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
# The browser UI: the front end's build (Vite, base /static/ui/), served by webapp.ui (its
# index.html) and WhiteNoise (its assets, straight from the folder: no collectstatic needed).
TESSERA_UI_DIR = Path(os.environ.get("TESSERA_UI_DIR", BASE_DIR / "frontend" / "dist")).resolve()
STATICFILES_DIRS = [("ui", TESSERA_UI_DIR)]
if not TESSERA_UI_DIR.is_dir():
    # Not built yet: the finder skips the folder and "/" says how to build it; no warning.
    SILENCED_SYSTEM_CHECKS = ["staticfiles.W004"]
WHITENOISE_USE_FINDERS = True
# Vite names assets by content hash (index-B2x_3kQa.js): those can be cached for good.
WHITENOISE_IMMUTABLE_FILE_TEST = r"^/static/ui/assets/.+-[0-9A-Za-z_-]{8,}\.\w+$"

# --- Celery -------------------------------------------------------------------------------
BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # The embedded broker: messages are files in one folder shared by web and worker.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # Kombu would otherwise put its broadcast (pidbox) files in the working directory.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # Workers wait on a socket in this folder and senders wake them (jobs.broker): a
        # statement reaches an idle worker at once, not on the next poll. The poll stays as
        # the safety net for a wake-up that got lost.
        "wake_folder": str(BROKER_DIR / "wake"),
        # A consumer's messages until it acknowledges them (given back when it dies), and
        # the files that were no message (jobs.broker). Same file system as the queue.
        "claimed_folder": str(BROKER_DIR / "claimed"),
        "dead_letter_folder": str(BROKER_DIR / "dead-letter"),
        "polling_interval": float(os.environ.get("TESSERA_BROKER_POLL_SECONDS", "1")),
    }
    CELERY_BROKER_TRANSPORT = "jobs.broker:Transport"
    for _folder in ("queue", "processed", "control", "wake", "claimed", "dead-letter"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
# Job state lives in our own tables, never in a Celery result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fix-up closes the task thread's database connections before and after
# every task unless this is set: a new PostgreSQL connection per statement, 5 to 10 ms of
# every job (docs/benchmarks.md, "Interactive latency"). Tasks call close_old_connections()
# first instead, as Django does for each request: CONN_MAX_AGE and a broken connection are
# honoured, a healthy one is used again.
CELERY_DB_REUSE_MAX = 2**62
# How a job's changes (status, progress, a cancel) reach whoever waits for them at once
# (jobs.notify): "redis" (pub/sub on the broker's Redis), "sockets" (datagram sockets under
# the data dir, one machine: the embedded default), "none" (re-read the row every
# TESSERA_NOTIFY_FALLBACK_SECONDS only). "auto" picks redis or sockets from the broker URL.
TESSERA_NOTIFY = os.environ.get("TESSERA_NOTIFY", "auto").strip().lower()
TESSERA_NOTIFY_FOLDER = DATA_DIR / "notify"
# Whoever waits re-reads the row this often even without a notification (a lost one).
TESSERA_NOTIFY_FALLBACK_SECONDS = float(os.environ.get("TESSERA_NOTIFY_FALLBACK_SECONDS", "1"))
# Requests one web process holds waiting at once (statements' `wait`, `GET /jobs/{id}` with
# `wait`); more answer at once. Half of gunicorn's --threads (16 in make run and Docker): the
# other half always serves everything else.
TESSERA_HELD_REQUESTS_PER_PROCESS = int(os.environ.get("TESSERA_HELD_REQUESTS_PER_PROCESS", "8"))
# A worker that has not written its heartbeat for this long counts as gone.
TESSERA_WORKER_HEARTBEAT_SECONDS = float(os.environ.get("TESSERA_WORKER_HEARTBEAT_SECONDS", "5"))
TESSERA_WORKER_TIMEOUT_SECONDS = float(os.environ.get("TESSERA_WORKER_TIMEOUT_SECONDS", "30"))
# How long a catalog write waits for a worker's Spark analyzer to type a table's computed
# columns and watermarks, or to derive a view's schema (FLIP-164: nothing unresolved is
# stored); past it the write is refused with 503 UNAVAILABLE and nothing is stored.
TESSERA_SCHEMA_CHECK_SECONDS = float(os.environ.get("TESSERA_SCHEMA_CHECK_SECONDS", "10"))
# The Celery queue those questions go to (empty: the default queue every worker consumes).
TESSERA_SCHEMA_CHECK_QUEUE = os.environ.get("TESSERA_SCHEMA_CHECK_QUEUE", "")

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["webapp.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "webapp.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "webapp.openapi.TesseraAutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Throttles key on the client's address: REMOTE_ADDR, unless the server sits behind this
    # many proxies that append to X-Forwarded-For (None would trust any client's header).
    "NUM_PROXIES": int(os.environ.get("TESSERA_NUM_PROXIES", "0")),
}
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ]

SPECTACULAR_SETTINGS = {
    "TITLE": "Tessera API",
    "DESCRIPTION": "Catalogs of tables, views and functions for Apache Spark, and SQL on Spark."
    "\n\nEvery 4xx and 5xx answer has one body: "
    '{"error": {"code": "NOT_FOUND", "message": "…", "details": {…}}}; code names the kind '
    "of error, message says it to a person, details (when there are any) names what it is "
    "about, e.g. the field.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["webapp.openapi.contract_paths"],
    # One name for the principal types wherever a field holds them (teams, audit, grants);
    # the charts' type keeps the name it had before another field called "type" came.
    "ENUM_NAME_OVERRIDES": {
        "PrincipalTypeEnum": ("user", "team"),
        "TypeEnum": ("bar", "line", "area", "scatter", "pie"),
        "EngineStateEnum": "jobs.models.Engine.STATE_CHOICES",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("TESSERA_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
CSRF_FAILURE_VIEW = "webapp.errors.json_csrf_failure"

# --- The HTTP edges (docs/security.md §6) ----------------------------------------------------
# Request bodies over this many bytes are refused (413 PAYLOAD_TOO_LARGE) before they are read.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("TESSERA_REQUEST_MAX_BYTES", str(2621440)))
# JSON bodies nested deeper are refused (400 JSON_TOO_DEEP); the API's own nest a few levels.
TESSERA_JSON_MAX_DEPTH = int(os.environ.get("TESSERA_JSON_MAX_DEPTH", "32"))
# Sign-in attempts (POST /auth/token, /auth/login) per client address; further ones answer
# 429 TOO_MANY_REQUESTS with Retry-After. Empty: no limit.
TESSERA_AUTH_THROTTLE_RATE = os.environ.get("TESSERA_AUTH_THROTTLE_RATE", "30/min") or None
# The longest an API token lives (seconds or 90d, 12h…; empty: no limit). New tokens expire
# after it at the latest, and a token older than it is refused (also one made before it was set).
_TOKEN_MAX_AGE = os.environ.get("TESSERA_TOKEN_MAX_AGE_SECONDS", "").strip()
TESSERA_TOKEN_MAX_AGE_SECONDS: int | None = (
    parse_seconds(_TOKEN_MAX_AGE, "TESSERA_TOKEN_MAX_AGE_SECONDS") or None
    if _TOKEN_MAX_AGE
    else None
)
# Tokens one user keeps: a sign-in past it revokes their least recently used token (scripts
# that sign in each run would otherwise pile tokens up). 0: no limit.
TESSERA_USER_TOKENS = int(os.environ.get("TESSERA_USER_TOKENS", "50"))
# The throttle's counts must be shared by every web process (gunicorn runs several, maybe on
# several hosts): the database is the one store both the embedded default (SQLite) and the
# production shape (PostgreSQL) have. Its table is made by a migration (accounts/0001).
CACHES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "tessera_cache",
        "OPTIONS": {"MAX_ENTRIES": 20000},
    },
    # HiveServer2 over HTTP (/cliservice): metadata answers, fetch positions and recent
    # sign-ins, shared by every web process; its own table, so that filling it never culls
    # the throttle's counts.
    "hiveserver2": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "tessera_hs2_cache",
        "OPTIONS": {"MAX_ENTRIES": 20000},
    },
}

# --- Sessions, jobs, results, Spark (see docs/statements.md) --------------------------------
# Workers run Spark; the web process never imports pyspark.
SPARK_MASTER = os.environ.get("SPARK_MASTER", "local[*]")
SPARK_REMOTE = os.environ.get("SPARK_REMOTE", "")  # sc://host:15002 for Spark Connect
# The worker's driver JVM (local mode: executors too): heap, and how long it may not answer
# before the worker kills and restarts it (docs/security.md §4).
TESSERA_SPARK_DRIVER_MEMORY = os.environ.get("TESSERA_SPARK_DRIVER_MEMORY", "1g")
TESSERA_SPARK_UNRESPONSIVE_SECONDS = float(
    os.environ.get("TESSERA_SPARK_UNRESPONSIVE_SECONDS", "60")
)
# Python UDFs may only come from these packages (CREATE FUNCTION … AS 'pkg.module.func').
TESSERA_UDF_PACKAGES = tuple(_env_list("TESSERA_UDF_PACKAGES", "tessera_udfs"))
# Pipeline jobs (EXECUTE PIPELINE 'pkg.module:function') may only run functions of these
# packages, colon-separated (docs/pipelines.md): the administrator vets them.
TESSERA_PIPELINE_PACKAGES = tuple(
    _env_list("TESSERA_PIPELINE_PACKAGES", "tessera_pipelines", sep=":")
)
# Query results: the first rows of each query, as Arrow files, kept for a while.
RESULTS_DIR = DATA_DIR / "results"
TESSERA_RESULT_MAX_ROWS = int(os.environ.get("TESSERA_RESULT_MAX_ROWS", "100000"))
# The most rows a statement sent with "row_limit" may keep (POST …/statements): whole results
# for programs (the Python Table API). Above TESSERA_RESULT_MAX_ROWS the worker writes them
# without collecting them in its driver JVM (engine.large_results).
TESSERA_RESULT_DOWNLOAD_MAX_ROWS = int(
    os.environ.get("TESSERA_RESULT_DOWNLOAD_MAX_ROWS", "100000000")
)
TESSERA_RESULT_FOLLOWERS_PER_USER = int(os.environ.get("TESSERA_RESULT_FOLLOWERS_PER_USER", "2"))
TESSERA_RESULT_TTL_SECONDS = int(os.environ.get("TESSERA_RESULT_TTL_SECONDS", str(7 * 86400)))
# How long a managed table's replaced version stays readable (VERSION AS OF, readers that
# started before a commit): seconds or a duration such as 7d, 12h, 30m (docs/writes.md).
TESSERA_VERSION_RETENTION_SECONDS = parse_seconds(
    os.environ.get("TESSERA_VERSION_RETENTION", "7d"), "TESSERA_VERSION_RETENTION"
)
# Grants (docs/security.md "Grants"). Who may create catalogs: ``everyone`` (every
# signed-in user) or ``admins``. Who may declare tables over paths under the storage roots
# without a ``READ FILES`` grant: ``admins`` (only they, and whoever they granted it to) or
# ``everyone``. How long the audit log keeps read, write and denied events.
TESSERA_CATALOG_CREATORS = os.environ.get("TESSERA_CATALOG_CREATORS", "everyone").strip().lower()
if TESSERA_CATALOG_CREATORS not in ("everyone", "admins"):
    raise ValueError("TESSERA_CATALOG_CREATORS must be 'everyone' or 'admins'")
TESSERA_READ_FILES_FOR = os.environ.get("TESSERA_READ_FILES_FOR", "admins").strip().lower()
if TESSERA_READ_FILES_FOR not in ("everyone", "admins"):
    raise ValueError("TESSERA_READ_FILES_FOR must be 'everyone' or 'admins'")
TESSERA_AUDIT_ACCESS_RETENTION_SECONDS = parse_seconds(
    os.environ.get("TESSERA_AUDIT_ACCESS_RETENTION", "90d"), "TESSERA_AUDIT_ACCESS_RETENTION"
)
# Data sent to a session as Arrow IPC (POST /sessions/{id}/uploads), kept as parquet under
# <UPLOADS_DIR>/<session id>/<upload id>/ until the upload or its session is deleted.
UPLOADS_DIR = DATA_DIR / "uploads"
TESSERA_UPLOAD_MAX_BYTES = int(os.environ.get("TESSERA_UPLOAD_MAX_BYTES", str(2 * 1024**3)))
# Where a new user's first editor tab starts when they have no last or chosen catalog
# (POST /sessions {"start": "workspace"}); empty: nowhere (the tab asks them to pick one).
TESSERA_DEFAULT_CATALOG = os.environ.get("TESSERA_DEFAULT_CATALOG", "")
# A user with no place at all (no last, chosen or server default catalog) gets a catalog of
# their own, created on first use with a ``default`` database (sessions/personal_catalog.py):
# this names it, ``{user}`` standing for the user name made an identifier. Empty: none.
TESSERA_PERSONAL_CATALOG = os.environ.get("TESSERA_PERSONAL_CATALOG", "user_{user}").strip()
if TESSERA_PERSONAL_CATALOG and "{user}" not in TESSERA_PERSONAL_CATALOG:
    raise ValueError("TESSERA_PERSONAL_CATALOG must contain {user} (or be empty: none)")
# A session nobody used for this long expires, with its temporary objects.
TESSERA_SESSION_IDLE_SECONDS = int(os.environ.get("TESSERA_SESSION_IDLE_SECONDS", str(86400)))
TESSERA_JOB_TIMEOUT_SECONDS = int(os.environ.get("TESSERA_JOB_TIMEOUT_SECONDS", "3600"))
# A CREATED job whose message has not been picked up for this long is enqueued again.
TESSERA_SWEEP_AFTER_SECONDS = float(os.environ.get("TESSERA_SWEEP_AFTER_SECONDS", "15"))
# Per user, on all workers together: Spark jobs running at once (more wait CREATED), and
# unfinished jobs (CREATED + RUNNING, a script counts once; more: 429 TOO_MANY_JOBS).
# 0: no limit. See jobs.scheduling.
TESSERA_USER_RUNNING_JOBS = int(os.environ.get("TESSERA_USER_RUNNING_JOBS", "4"))
TESSERA_USER_QUEUED_JOBS = int(os.environ.get("TESSERA_USER_QUEUED_JOBS", "100"))
# Per user (docs/security.md §4, "Quotas"; 0: no limit): streams running or waiting (more:
# 429 TOO_MANY_STREAMS), bytes of uploads held at once (more: 413 UPLOAD_QUOTA_EXCEEDED),
# open sessions (one more closes their oldest idle session; none idle: 429 TOO_MANY_SESSIONS).
TESSERA_USER_STREAMS = int(os.environ.get("TESSERA_USER_STREAMS", "1"))
TESSERA_USER_UPLOAD_BYTES = int(os.environ.get("TESSERA_USER_UPLOAD_BYTES", str(4 * 1024**3)))
TESSERA_USER_SESSIONS = int(os.environ.get("TESSERA_USER_SESSIONS", "50"))
# Editor tabs per user (more: 409 TOO_MANY_TABS; 0: no limit), SQL characters in one (413).
TESSERA_EDITOR_TABS_PER_USER = int(os.environ.get("TESSERA_EDITOR_TABS_PER_USER", "50"))
TESSERA_EDITOR_TAB_MAX_CHARS = int(os.environ.get("TESSERA_EDITOR_TAB_MAX_CHARS", str(1024**2)))
# HiveServer2 (hiveserver2/, docs/api.md "HiveServer2"): the Thrift binary endpoint with SASL
# PLAIN that JDBC/ODBC drivers, PyHive and dbt-spark speak; its own process (`manage.py
# hiveserver2`, started by `make run`). Port 0: off. A Thrift frame (one request) over the
# byte limit closes its connection; at most that many connections are served at once (more
# are closed at once); a connection idle that long is closed (its sessions stay).
TESSERA_HS2_PORT = int(os.environ.get("TESSERA_HS2_PORT", "10009"))
TESSERA_HS2_BIND = os.environ.get("TESSERA_HS2_BIND", os.environ.get("TESSERA_BIND", "127.0.0.1"))
TESSERA_HS2_MAX_FRAME_BYTES = int(os.environ.get("TESSERA_HS2_MAX_FRAME_BYTES", str(8 * 1024**2)))
TESSERA_HS2_MAX_CONNECTIONS = int(os.environ.get("TESSERA_HS2_MAX_CONNECTIONS", "200"))
TESSERA_HS2_IDLE_SECONDS = int(os.environ.get("TESSERA_HS2_IDLE_SECONDS", "3600"))

# E-mail: alerts that trigger or clear (schedules/alerts.py), through Django's mail. The
# console backend by default (make run prints them in the worker's log); set the backend to
# django.core.mail.backends.smtp.EmailBackend and the host for a real server. Tests use
# Django's locmem backend (its test set-up sets it).
EMAIL_BACKEND = os.environ.get(
    "TESSERA_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("TESSERA_EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("TESSERA_EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("TESSERA_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("TESSERA_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = _env_bool("TESSERA_EMAIL_TLS")
DEFAULT_FROM_EMAIL = os.environ.get("TESSERA_EMAIL_FROM", "tessera@localhost")

# Arrow Flight SQL (flightsql/, docs/flightsql.md): gRPC on its own process (`manage.py
# flightsql`, started by `make run`). Port 0: off. A bearer token unused for
# TESSERA_FLIGHT_SQL_IDLE_SECONDS ends (the client signs in again).
TESSERA_FLIGHT_SQL_PORT = int(os.environ.get("TESSERA_FLIGHT_SQL_PORT", "32010"))
TESSERA_FLIGHT_SQL_BIND = os.environ.get(
    "TESSERA_FLIGHT_SQL_BIND", os.environ.get("TESSERA_BIND", "127.0.0.1")
)
TESSERA_FLIGHT_SQL_IDLE_SECONDS = int(os.environ.get("TESSERA_FLIGHT_SQL_IDLE_SECONDS", "3600"))
# TLS on the port (flightsql/tls.py): PEM files of the certificate chain and its private key,
# both or neither (one alone stops `manage.py flightsql` at start). Both: grpc+tls://.
TESSERA_FLIGHT_SQL_TLS_CERT = os.environ.get("TESSERA_FLIGHT_SQL_TLS_CERT", "")
TESSERA_FLIGHT_SQL_TLS_KEY = os.environ.get("TESSERA_FLIGHT_SQL_TLS_KEY", "")
# Engines (jobs/engines.py, engine/pool.py, docs/deploy.md "Engines"): which jobs share a Spark
# application. "user" (default) and "team" (a user's first group by name; none: their own)
# give each share key an engine process of its own on the worker host, started on demand,
# stopped after TESSERA_ENGINE_IDLE_SECONDS unused; at most TESSERA_ENGINES_MAX per worker
# (the least recently used idle one stops for a new key), plus TESSERA_ENGINE_SPARES started
# ahead for the next new key. "server": every job in the worker's own Spark (one engine).
# On a standalone cluster each engine takes at most TESSERA_ENGINE_CORES executor cores.
TESSERA_ENGINE_SHARE_LEVEL = os.environ.get("TESSERA_ENGINE_SHARE_LEVEL", "user").strip().lower()
TESSERA_ENGINE_IDLE_SECONDS = float(os.environ.get("TESSERA_ENGINE_IDLE_SECONDS", "900"))
TESSERA_ENGINES_MAX = int(os.environ.get("TESSERA_ENGINES_MAX", "6"))
TESSERA_ENGINE_SPARES = int(os.environ.get("TESSERA_ENGINE_SPARES", "1"))
TESSERA_ENGINE_CORES = int(os.environ.get("TESSERA_ENGINE_CORES", "1"))
# Streams (docs/streaming.md): a worker process runs at most this many streaming
# jobs at once, and never in its last slot (--concurrency 4: at most min(this, 3)); a
# streaming statement sent when no live worker has a stream slot free is refused (429
# TOO_MANY_STREAMS). 0: this worker runs no streams.
TESSERA_WORKER_MAX_STREAMS = int(os.environ.get("TESSERA_WORKER_MAX_STREAMS", "2"))
# A stream whose worker is lost is resumed from its checkpoint by another worker (or the same
# one restarted) at most this many times; then it fails WORKER_LOST. 0: never resumed.
TESSERA_STREAM_MAX_RESTARTS = int(os.environ.get("TESSERA_STREAM_MAX_RESTARTS", "5"))
# The most a session's job.timeout_seconds may ask for (SET/PATCH can only go up to it).
TESSERA_JOB_TIMEOUT_MAX_SECONDS = int(
    os.environ.get("TESSERA_JOB_TIMEOUT_MAX_SECONDS", str(TESSERA_JOB_TIMEOUT_SECONDS))
)
# Session properties (what a user may SET, with their ranges) live in one registry:
# core/session_properties.py, bound to the limits above by sessions/planning.py.

# --- Statement limits: what one user's statements may cost the web process -----------------
# (docs/security.md §4: how they were measured.) Checked before a statement is planned;
# a script counts as a whole for characters and tokens.
TESSERA_SQL_MAX_CHARS = int(os.environ.get("TESSERA_SQL_MAX_CHARS", str(1024 * 1024)))
TESSERA_SQL_MAX_TOKENS = int(os.environ.get("TESSERA_SQL_MAX_TOKENS", "30000"))
TESSERA_SQL_MAX_DEPTH = int(os.environ.get("TESSERA_SQL_MAX_DEPTH", "24"))
TESSERA_SCRIPT_MAX_STATEMENTS = int(os.environ.get("TESSERA_SCRIPT_MAX_STATEMENTS", "500"))
# Planning one statement stops with PLANNING_TIMEOUT after this many seconds (0: never).
TESSERA_PLANNING_BUDGET_SECONDS = float(os.environ.get("TESSERA_PLANNING_BUDGET_SECONDS", "10"))
# Statements planned at once in one web process: per user, and in all (sessions/planning.py).
# A statement that finds no free slot waits up to TESSERA_PLANNING_WAIT_SECONDS for one
# (at most TESSERA_PLANNING_WAITING_PER_USER of one user wait, each counted as a held
# request of TESSERA_HELD_REQUESTS_PER_PROCESS), then 429 TOO_MANY_REQUESTS.
TESSERA_PLANNING_PER_USER = int(os.environ.get("TESSERA_PLANNING_PER_USER", "4"))
TESSERA_PLANNING_PER_PROCESS = int(os.environ.get("TESSERA_PLANNING_PER_PROCESS", "2"))
TESSERA_PLANNING_WAIT_SECONDS = float(os.environ.get("TESSERA_PLANNING_WAIT_SECONDS", "5"))
TESSERA_PLANNING_WAITING_PER_USER = int(os.environ.get("TESSERA_PLANNING_WAITING_PER_USER", "4"))


# --- Storage roots stay apart from the server's own files (docs/security.md §2) -------------
# Checked at start, in every process that loads these settings (web server, worker,
# manage.py): a root holding the data directory or the warehouse, or one whose text Hadoop
# could read differently, stops the process here with the reason.
def _check_storage_roots() -> None:
    from django.core.exceptions import ImproperlyConfigured

    from core.locations import check_storage_roots

    protected = {
        "the warehouse": WAREHOUSE_DIR,
        "the results directory": RESULTS_DIR,
        "the uploads directory": UPLOADS_DIR,
        "the broker directory": BROKER_DIR,
        "STATIC_ROOT": STATIC_ROOT,
    }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        protected["the SQLite database"] = Path(str(DATABASES["default"]["NAME"]))
    problems = check_storage_roots(
        [str(root) for root in TESSERA_STORAGE_ROOTS],
        str(DATA_DIR),
        {name: os.path.realpath(path) for name, path in protected.items()},
    )
    if problems:
        raise ImproperlyConfigured(" ".join(problems))


_check_storage_roots()
