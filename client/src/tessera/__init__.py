"""Tessera's Python Table API: ``tessera.connect()`` → :class:`TableEnvironment`.

Named after PyFlink's Table API in snake_case (FLIP-136, FLIP-164, FLIP-218), talking to a
Tessera server over its REST API. See docs/python.md.
"""

from __future__ import annotations

from tessera import errors, expressions
from tessera.config import TableConfig
from tessera.environment import TableEnvironment, connect
from tessera.errors import (
    AlreadyExistsError,
    AuthenticationError,
    CanceledError,
    ConnectionFailedError,
    ForbiddenSqlError,
    JobFailedError,
    NotFoundError,
    ParseError,
    PayloadTooLargeError,
    PermissionDeniedError,
    ResultTooLargeError,
    RetryableError,
    TesseraError,
    TokenExpiredError,
    UnsupportedError,
    ValidationError,
)
from tessera.grouping import AggregatedTable, GroupedTable
from tessera.result import Row, TableResult
from tessera.retry import NO_RETRY, RetryPolicy
from tessera.schema import (
    Column,
    PrimaryKey,
    ResolvedColumn,
    ResolvedSchema,
    Schema,
    SchemaBuilder,
    TableDescriptor,
    TableDescriptorBuilder,
    Watermark,
)
from tessera.sql import col, lit, quote_identifier, string_literal
from tessera.statement_set import StatementSet
from tessera.table import Table
from tessera.windows import Over, Session, Slide, Tumble

__version__ = "0.1.0"

__all__ = [
    "NO_RETRY",
    "AggregatedTable",
    "AlreadyExistsError",
    "AuthenticationError",
    "CanceledError",
    "Column",
    "ConnectionFailedError",
    "ForbiddenSqlError",
    "GroupedTable",
    "JobFailedError",
    "NotFoundError",
    "Over",
    "ParseError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "PrimaryKey",
    "ResolvedColumn",
    "ResolvedSchema",
    "ResultTooLargeError",
    "RetryPolicy",
    "RetryableError",
    "Row",
    "Schema",
    "SchemaBuilder",
    "Session",
    "Slide",
    "StatementSet",
    "Table",
    "TableConfig",
    "TableDescriptor",
    "TableDescriptorBuilder",
    "TableEnvironment",
    "TableResult",
    "TesseraError",
    "TokenExpiredError",
    "Tumble",
    "UnsupportedError",
    "ValidationError",
    "Watermark",
    "col",
    "connect",
    "errors",
    "expressions",
    "lit",
    "quote_identifier",
    "string_literal",
]
