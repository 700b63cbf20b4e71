"""The SQL guard: refuse what could reach past the catalog, before anything is resolved.

The rule: the planner must see every object a statement reads or writes before Spark
runs it, so anything that names files, code, Spark's own catalog or names built at run
time is refused with ``ForbiddenSql`` and a sentence saying what and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from core import locations, spark_semantics
from core import options as table_options
from core.identifiers import name_key, quote_part
from core.planner.errors import ForbiddenSql, UnsupportedStatement
from core.planner.tokens import Token

# File formats a table may use (USING / 'connector' / 'format'); what the Spark wheel ships.
FILE_FORMATS: tuple[str, ...] = table_options.FILE_FORMATS

# Spark data source short names: ``<source>.`<path>``` reads files (or more) directly.
DATA_SOURCES: frozenset[str] = frozenset(
    {
        "avro",
        "binaryfile",
        "console",
        "csv",
        "delta",
        "hive",
        "hudi",
        "iceberg",
        "image",
        "jdbc",
        "json",
        "kafka",
        "libsvm",
        "noop",
        "orc",
        "parquet",
        "rate",
        "socket",
        "text",
        "xml",
    }
)

RESERVED_NAMES: dict[str, str] = {
    "spark_catalog": "Addressing Spark's own catalog (`spark_catalog`) is not allowed",
    "global_temp": "Spark's global temporary views (`global_temp`) are not allowed",
}
_CATALOG_REASON = ": every object must come from the Tessera catalog."

FORBIDDEN_FUNCTIONS: dict[str, str] = {
    "reflect": "it calls arbitrary Java methods on the cluster",
    "java_method": "it calls arbitrary Java methods on the cluster",
    "try_reflect": "it calls arbitrary Java methods on the cluster",
    "python_worker_logs": "it reads the logs of Spark's Python workers, shared by all users",
    "from_protobuf": "it can read descriptor files by path",
    "to_protobuf": "it can read descriptor files by path",
    # Tessera ships no Avro; its options can fetch a schema by URL (avroSchemaUrl).
    "from_avro": "its options can fetch a schema by URL",
    "to_avro": "its options can fetch a schema by URL",
    "schema_of_avro": "its options can fetch a schema by URL",
}

# Option keys of Spark's functions that read a file or a URL (from_xml's XSD validation):
# refused wherever they appear as a string in a query (the worker's guard also requires
# those functions' options to be a literal map without them).
FORBIDDEN_OPTION_KEYS: dict[str, str] = {
    "rowvalidationxsdpath": "it reads an XML schema file by path or URL",
}

_PATH_CHARACTERS = re.compile(r"[/\\:.*?~]")


def check_reserved_parts(parts: Iterable[str]) -> None:
    """Refuse ``spark_catalog`` / ``global_temp`` used as a catalog or database name."""
    for part in parts:
        reason = RESERVED_NAMES.get(name_key(part))
        if reason is not None:
            raise ForbiddenSql(reason + _CATALOG_REASON)


def check_qualifiers(parts: Sequence[str]) -> None:
    """Refuse reserved names in the qualifier positions of an object path."""
    check_reserved_parts(parts[:-1])


def check_file_path_table(parts: Sequence[str], action: str = "Reading") -> None:
    """Refuse ``parquet.`/x``` and its kin: a data source name qualifying a path
    (``action``: "Reading", or "Writing" for the target of a write)."""
    if len(parts) == 2 and name_key(parts[0]) in DATA_SOURCES and _PATH_CHARACTERS.search(parts[1]):
        shown = f"{parts[0]}.{quote_part(parts[1])}"
        raise ForbiddenSql(
            f"{action} files by path ({shown}) is not allowed: "
            "every table must come from the catalog."
        )


def check_function_name(parts: Sequence[str]) -> None:
    """Refuse calls of functions that reach outside SQL (reflect and friends)."""
    name = name_key(parts[-1])
    reason = FORBIDDEN_FUNCTIONS.get(name)
    if reason is not None:
        raise ForbiddenSql(f"Calling {name}() is not allowed: {reason}.")
    check_qualifiers(parts)


def _next(tokens: Sequence[Token], i: int) -> Token | None:
    return tokens[i + 1] if i + 1 < len(tokens) else None


def check_statement_tokens(tokens: Sequence[Token]) -> None:
    """Token-level rules that hold for every statement, whatever its kind."""
    for i, token in enumerate(tokens):
        following = _next(tokens, i)
        if token.is_name and following is not None and following.is_punct("."):
            check_reserved_parts([token.text])
        if token.is_word("IDENTIFIER") and following is not None and following.is_punct("("):
            raise ForbiddenSql(
                "IDENTIFIER(…) is not allowed: names built from strings cannot be checked "
                "before the statement runs."
            )
        if token.is_word("USING") and following is not None:
            if following.kind == "string":
                raise ForbiddenSql(
                    "Script transforms (TRANSFORM … USING '…') are not allowed: "
                    "they run external programs on the cluster."
                )
            if following.is_word("JAR", "FILE", "ARCHIVE"):
                raise ForbiddenSql(
                    f"USING {following.upper} is not allowed: Tessera does not load code "
                    "or files into Spark."
                )


_TABLE_QUERY_PREDECESSORS = frozenset({"UNION", "INTERSECT", "EXCEPT", "MINUS", "ALL", "DISTINCT"})


def check_query_tokens(tokens: Sequence[Token]) -> None:
    """Token-level rules for query text (a safety net under the syntax-tree checks)."""
    for i, token in enumerate(tokens):
        following = _next(tokens, i)
        previous = tokens[i - 1] if i > 0 else None
        if token.kind == "string" and name_key(token.text) in FORBIDDEN_OPTION_KEYS:
            reason = FORBIDDEN_OPTION_KEYS[name_key(token.text)]
            raise ForbiddenSql(f"The option '{token.text}' is not allowed: {reason}.")
        opens_call = following is not None and following.is_punct("(")
        forbidden = token.is_name and name_key(token.text) in FORBIDDEN_FUNCTIONS
        if forbidden and opens_call and (previous is None or not previous.is_word("AS")):
            check_function_name([token.text])
        if token.is_word("INSERT") and following is not None:
            if following.is_word("OVERWRITE") and is_directory_insert(tokens, i):
                raise forbidden_directory_insert()
            if following.is_word("INTO", "OVERWRITE"):
                raise unsupported_insert()
        if token.is_word("TABLE") and _starts_table_query(previous):
            raise ForbiddenSql(
                "TABLE … inside a query is not supported: write SELECT * FROM … so that "
                "the planner can resolve the table."
            )


def _starts_table_query(previous: Token | None) -> bool:
    """Whether a TABLE keyword after ``previous`` starts ``TABLE t`` inside a query."""
    if previous is None:
        return False
    return previous.upper in _TABLE_QUERY_PREDECESSORS or previous.is_punct("(", ",", "=>")


def is_directory_insert(tokens: Sequence[Token], i: int) -> bool:
    rest = [t.upper for t in tokens[i + 2 : i + 4]]
    return rest[:1] == ["DIRECTORY"] or rest == ["LOCAL", "DIRECTORY"]


def forbidden_directory_insert() -> ForbiddenSql:
    return ForbiddenSql(
        "INSERT OVERWRITE DIRECTORY is not allowed: writing files by path bypasses the catalog."
    )


def unsupported_insert() -> UnsupportedStatement:
    return UnsupportedStatement(
        "INSERT is supported only as a statement of its own (INSERT INTO|OVERWRITE p <query>, "
        "or several in EXECUTE STATEMENT SET), not inside or after a query "
        "(WITH … INSERT, FROM … INSERT)."
    )


def check_set_key(key: str, settable_keys: Iterable[str], statement: str = "SET") -> None:
    """Refuse SET/RESET of a key outside the allowlist (a key Spark removed: Spark's own
    sentence)."""
    allowed = sorted(settable_keys)
    removed = spark_semantics.removed_key_message(key)
    if key not in allowed and removed is not None:
        raise ForbiddenSql(f"{statement} of '{key}' is not allowed: {removed}")
    if key not in allowed:
        raise ForbiddenSql(
            f"{statement} of '{key}' is not allowed: only these session properties can be "
            f"changed: {', '.join(allowed)}."
        )


def check_file_format(
    value: str, what: str, formats: tuple[str, ...] = table_options.TABLE_FORMATS
) -> str:
    """Return the file format in lower case; refuse non-file sources (jdbc, hive, …).
    ``delta`` is a format of external tables, read-only (``core.options.DELTA``)."""
    try:
        return table_options.check_format(value, what, formats)
    except table_options.OptionRefused as exc:
        raise ForbiddenSql(exc.message) from None


def check_storage_path(path: str, roots: Sequence[str]) -> str:
    """Return the normalised local path; refuse paths whose Hadoop reading could differ
    from their text (``core.locations``) and paths outside the storage roots."""
    try:
        return locations.check_location(path, roots)
    except locations.LocationRefused as exc:
        raise ForbiddenSql(exc.message, details=exc.details) from None


def check_udf_implementation(implementation: str, packages: Sequence[str]) -> str:
    """Refuse Python functions outside the allowlisted packages."""
    dotted = implementation.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", dotted):
        raise ForbiddenSql(
            f"The function implementation '{implementation}' is not allowed: it must be a "
            "dotted Python name such as package.module.function."
        )
    if not any(dotted.startswith(package + ".") for package in packages):
        raise ForbiddenSql(
            f"The function implementation '{implementation}' is not allowed: Python "
            f"functions must come from the allowlisted packages ({', '.join(packages)})."
        )
    return dotted
