"""Writes to the catalog. Views call exactly one of these; each validates fully before
it writes anything, runs in one transaction, and touches the file system only after commit.

One module per noun: ``catalogs``, ``databases``, ``tables``, ``views``, ``functions``,
``staging`` (CTAS stage tables), ``statistics`` (ANALYZE TABLE) and ``checks`` (the input
checks they share: options, paths, partitioning, schemas); ``_common`` holds the private
helpers several of them use. This package re-exports their public functions, so that
``from catalog import services; services.table_create(...)`` reads as before; the modules of
the package import from one another, never from here.
"""

from __future__ import annotations

from catalog.services.catalogs import (
    catalog_create,
    catalog_delete,
    catalog_update,
    may_create_catalogs,
)
from catalog.services.checks import (
    FILE_FORMATS,
    check_options,
    check_partitioning,
    check_path_free,
    check_temporary_path,
    check_write_mode,
    require_read_files,
    resolve_checked,
    resolve_schema,
)
from catalog.services.databases import database_create, database_delete, database_update
from catalog.services.functions import function_create, function_delete, function_update
from catalog.services.staging import (
    ctas_schema,
    ctas_table_activate,
    ctas_table_create,
    ctas_table_drop,
)
from catalog.services.statistics import table_store_statistics
from catalog.services.tables import (
    ensure_can_write_table,
    may_write_table,
    table_create,
    table_create_from_properties,
    table_delete,
    table_update,
)
from catalog.services.views import view_create, view_schema, view_schema_json, view_update

__all__ = [
    "FILE_FORMATS",
    "catalog_create",
    "catalog_delete",
    "catalog_update",
    "check_options",
    "check_partitioning",
    "check_path_free",
    "check_temporary_path",
    "check_write_mode",
    "ctas_schema",
    "ctas_table_activate",
    "ctas_table_create",
    "ctas_table_drop",
    "database_create",
    "database_delete",
    "database_update",
    "ensure_can_write_table",
    "function_create",
    "function_delete",
    "function_update",
    "may_create_catalogs",
    "may_write_table",
    "require_read_files",
    "resolve_checked",
    "resolve_schema",
    "table_create",
    "table_create_from_properties",
    "table_delete",
    "table_store_statistics",
    "table_update",
    "view_create",
    "view_schema",
    "view_schema_json",
    "view_update",
]
