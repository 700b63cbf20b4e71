"""Register a plan's relations and functions, and the session's properties, in a job's
Spark session (see docs/statements.md, "The plan").

Each relation becomes a temporary view named by its alias; each function a temporary
function named by its alias. Only this job's ``spark.newSession()`` sees them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from importlib import import_module
from typing import Any
from urllib.parse import unquote, urlparse

from pyspark.sql import SparkSession
from pyspark.sql import types as st

from core import options as table_options
from core.errors import CoreError
from core.locations import is_under
from core.planner import ROW_CHANGE_ACTIONS, ColumnPlan, FunctionPlan, Plan, RelationPlan
from core.planner.errors import ForbiddenSql
from core.planner.guard import check_udf_implementation
from core.planner.sources import DATAFRAME_CONNECTOR, RATE_CONNECTOR
from core.planner.table_plans import UNWRITTEN
from core.session_properties import spark_settings
from engine import dataframes, errors, locations, parser_sessions, sqlguard
from engine.typing import nullable_inside
from tabledata import manifest


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def apply_properties(spark: SparkSession, properties: Mapping[str, Any]) -> None:
    """Set the session's ``spark.*`` properties: only the allow-listed keys, each value
    checked again against its range (``core.session_properties``; a value stored before
    the range existed is clamped, an unreadable one dropped and Spark's default kept)."""
    for key, value in spark_settings(properties).items():
        # On Spark Connect also on the guard's parser session (ANSI mode changes the parse).
        parser_sessions.mirror_conf(spark, key, value)


def non_null_value(data_type: st.DataType) -> str | None:
    """A SQL expression of ``data_type`` that Spark knows is never NULL (None when there is
    none to write): the last argument of ``not_null_expression``'s ``coalesce``."""
    if isinstance(data_type, st.DecimalType):
        # A cast to a decimal may overflow (nullable); a literal of the scale never does.
        return "0BD" if data_type.scale == 0 else "0." + "0" * data_type.scale
    if isinstance(data_type, st.BooleanType):
        return "false"
    if isinstance(data_type, st.BinaryType):
        return "X''"
    if isinstance(data_type, st.StringType):
        return "''"
    if isinstance(data_type, st.DateType):
        return "DATE'1970-01-01'"
    if isinstance(data_type, st.TimestampNTZType):
        return "TIMESTAMP_NTZ'1970-01-01 00:00:00'"
    if isinstance(data_type, (st.ByteType, st.ShortType, st.IntegerType, st.LongType)):
        suffix = {st.ByteType: "Y", st.ShortType: "S", st.IntegerType: "", st.LongType: "L"}
        return "0" + suffix[type(data_type)]
    if isinstance(data_type, (st.FloatType, st.DoubleType, st.TimestampType)):
        return f"CAST(0 AS {data_type.simpleString().upper()})"
    if isinstance(data_type, (st.ArrayType, st.MapType)):
        empty = "array()" if isinstance(data_type, st.ArrayType) else "map()"
        return f"CAST({empty} AS {data_type.simpleString()})"
    return None


def not_null_expression(name: str, data_type: st.DataType) -> str | None:
    """Column ``name`` as Spark reads it from a file (always nullable), made NOT NULL again:
    ``coalesce(c, CAST(raise_error(…) AS T), <never NULL>)`` — Spark knows it is never NULL,
    and a NULL raises (the data was checked before; this only keeps the fact). None for a
    type with no such expression (it stays nullable)."""
    value = non_null_value(data_type)
    if value is None:
        return None
    message = f"NULL in column {name}, declared NOT NULL".replace("'", "")
    return (
        f"coalesce({quote(name)}, CAST(raise_error('{message}') AS {data_type.simpleString()}), "
        f"{value}) AS {quote(name)}"
    )


def column_expression(column: ColumnPlan) -> str:
    name = column.name
    if column.kind == "computed":
        return f"{column.expression} AS {quote(name)}"
    if column.kind == "metadata":
        key = str(column.metadata_key or name).lower()
        return f"_metadata.{quote(key)} AS {quote(name)}"
    return quote(name)


def register_table(spark: SparkSession, relation: RelationPlan, session_id: Any = None) -> None:
    """Register a table relation as a temporary view named by its alias. Its format, path
    and options are checked again here, at use (``engine.locations``): Spark reads
    the resolved path that was checked, with allow-listed options only (an upload: only
    one of the job's session ``session_id``; a pipeline's DataFrame: only in that running
    pipeline's SparkSession, ``engine.dataframes``)."""
    if relation.format == DATAFRAME_CONNECTOR:
        frame = dataframes.read(spark, relation, _display(relation))
    elif relation.format == table_options.DELTA:
        frame = read_delta(spark, relation, _display(relation), session_id)
    elif relation.time_travel:
        raise CoreError(f"Table {_display(relation)} has no versions to read: it is not Delta.")
    elif relation.format == RATE_CONNECTOR:
        # A stream; a batch plan names it only to derive a view's schema (the planner
        # refuses reading it in batch mode): no rows, the rate source's columns.
        frame = spark.createDataFrame([], relation.physical_schema)
    else:
        source = locations.checked_read(spark, relation, _display(relation), session_id)
        reader: Any = spark.read.format(source.format)
        if relation.physical_schema:
            reader = reader.schema(relation.physical_schema)
        frame = load_committed(reader, source.path, dict(source.options), _display(relation))
    columns = relation.columns
    if columns:
        # Computed and metadata columns: Spark-parsed and checked (built-ins only).
        expressions = [column_expression(c) for c in columns]
        if locations.reads_upload(relation):
            # Spark reads every file column as nullable; an upload's NOT NULL (checked on
            # its data at CREATE TEMPORARY TABLE) is kept, so that CTAS keeps it too. Not
            # for other tables: the wrapped column would lose parquet's filter pushdown.
            fields = {f.name.lower(): f for f in frame.schema.fields}
            for index, column in enumerate(columns):
                found = fields.get(column.name.lower())
                if column.kind == "physical" and column.not_null and found is not None:
                    expressions[index] = (
                        not_null_expression(column.name, found.dataType) or expressions[index]
                    )
        frame = sqlguard.guard(spark).select_expr(frame, expressions)
    frame.createOrReplaceTempView(relation.alias)


# Delta's reader options the engine sets from a plan's time travel (never a table's own).
_TRAVEL_OPTIONS = {"versionAsOf": r"\d{1,10}", "timestampAsOf": r"[0-9 :.+-]{10,40}"}
# The change data feed between two versions, exactly these three (table_changes).
_FEED_OPTIONS = ("readChangeFeed", "startingVersion", "endingVersion")


def _travel_options(relation: RelationPlan, shown: str) -> dict[str, str]:
    """The plan's time travel, checked: one of Delta's two reader options, a literal; or
    its change data feed between two versions (``table_changes``)."""
    travel = dict(relation.time_travel or {})
    if travel.get("readChangeFeed") == "true":
        start, end = travel.get("startingVersion", ""), travel.get("endingVersion", "")
        if (
            set(travel) != set(_FEED_OPTIONS)
            or not re.fullmatch(r"\d{1,10}", str(start))
            or not re.fullmatch(r"\d{1,10}", str(end))
            or int(start) > int(end)
        ):
            raise ForbiddenSql(f"Table {shown} cannot be read: the plan's change feed is not one.")
        return {key: str(value) for key, value in travel.items()}
    if len(travel) > 1 or any(
        key not in _TRAVEL_OPTIONS or not re.fullmatch(_TRAVEL_OPTIONS[key], str(value))
        for key, value in travel.items()
    ):
        raise ForbiddenSql(f"Table {shown} cannot be read: the plan's time travel is not one.")
    return {key: str(value) for key, value in travel.items()}


def read_delta(
    spark: SparkSession, relation: RelationPlan, shown: str, session_id: Any = None
) -> Any:
    """An external Delta table: ``spark.read.format('delta').load(path)`` of its checked
    path, at the plan's version if any. Delta's log is the truth of its rows (no manifest);
    the declared physical columns must be the Delta table's, by name and type."""
    source = locations.checked_read(spark, relation, shown, session_id)
    if dict(relation.time_travel or {}) == UNWRITTEN:
        # A managed Delta table no job has committed into: no rows, whatever its log holds.
        return spark.createDataFrame([], relation.physical_schema)
    travel = _travel_options(relation, shown)
    if not os.path.isdir(os.path.join(source.path, "_delta_log")):
        raise CoreError(
            f"Table {shown} cannot be read: its path holds no Delta table (there is no "
            "_delta_log directory). Write the Delta table there first, or declare the table "
            "with the files' own format."
        )
    try:
        frame = spark.read.format(table_options.DELTA).options(**travel).load(source.path)
        found = frame.schema  # analysed now (Spark Connect too): a missing version fails here
    except Exception as exc:
        if not errors.is_spark_exception(exc):
            raise
        get = getattr(exc, "getCondition", None)
        condition = str(get() or "") if callable(get) else ""
        if not travel or not condition.startswith("DELTA_"):
            raise
        # A version or moment the log lacks: Delta's sentence, Tessera's VALIDATION_ERROR.
        what = (
            f"The changes of table {shown} from version {travel['startingVersion']} to "
            f"{travel['endingVersion']} cannot be read"
            if "readChangeFeed" in travel
            else f"Table {shown} cannot be read at {next(iter(travel.values()))}"
        )
        raise CoreError(
            f"{what}. " + errors.scrub_paths(errors.spark_message(exc)),
            details={"table": shown, "condition": condition},
        ) from None
    if "readChangeFeed" in travel:
        # The feed's frame lists no input files: the commits it reads are checked instead.
        versions = range(int(travel["startingVersion"]), int(travel["endingVersion"]) + 1)
        _check_feed_files(source.path, versions, shown)
    else:
        _check_delta_files(frame, source.path, shown)
    if relation.physical_schema:
        _check_delta_columns(spark, relation, found, shown)
    return frame


def _check_delta_files(frame: Any, path: str, shown: str) -> None:
    """Every data file the log names (at this version) lies inside the table's checked path,
    links resolved: a log may name absolute URIs or ``../`` paths (shallow clones do), which
    would read past the storage boundary."""
    root = os.path.realpath(path)
    for uri in frame.inputFiles():
        parsed = urlparse(uri)
        local = unquote(parsed.path) if parsed.scheme in ("", "file") else ""
        real = os.path.realpath(local) if local and not parsed.netloc else ""
        if not real or real == root or not is_under(real, root):
            raise ForbiddenSql(
                f"Table {shown} cannot be read: its Delta log names a data file outside the "
                "table's path; Tessera reads only files inside it."
            )


def _outside(uri: str, root: str) -> bool:
    """Whether a data file the log names (relative to the table's path, or an absolute
    URI) lies outside the table's path, links resolved."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file") or parsed.netloc:
        return True
    local = unquote(parsed.path)
    real = os.path.realpath(local if os.path.isabs(local) else os.path.join(root, local))
    return real == root or not is_under(real, root)


def _check_feed_files(path: str, versions: range, shown: str) -> None:
    """Every file the commits of the change feed's versions name (data files added or
    removed, change files, deletion vectors stored by path) lies inside the table's path:
    the same boundary as ``_check_delta_files``, read from the log's own commits."""
    root = os.path.realpath(path)
    for version in versions:
        commit = os.path.join(path, "_delta_log", f"{version:020d}.json")
        if not os.path.isfile(commit):
            continue  # Delta's reader answers for a commit the log no longer has
        with open(commit, encoding="utf-8") as lines:
            for line in lines:
                action = json.loads(line) if line.strip() else {}
                for kind in ("add", "remove", "cdc"):
                    entry = action.get(kind) if isinstance(action, dict) else None
                    if not isinstance(entry, dict):
                        continue
                    named = [str(entry.get("path", ""))]
                    vector = entry.get("deletionVector")
                    if isinstance(vector, dict) and vector.get("storageType") == "p":
                        named.append(str(vector.get("pathOrInlineDv", "")))
                    if any(_outside(uri, root) for uri in named):
                        raise ForbiddenSql(
                            f"Table {shown} cannot be read: its Delta log names a data file "
                            "outside the table's path; Tessera reads only files inside it."
                        )


def _check_delta_columns(
    spark: SparkSession, relation: RelationPlan, found: Any, shown: str
) -> None:
    """Every declared physical column is one of the Delta table's, of the same type (its
    nullability aside): the catalog's schema may be a subset of the log's, never other."""
    declared = spark.createDataFrame([], relation.physical_schema).schema
    actual = {f.name.lower(): f for f in found.fields}
    for column in declared.fields:
        match = actual.get(column.name.lower())
        if match is None:
            raise CoreError(
                f"Table {shown} declares the column {quote(column.name)}, which its Delta table "
                f"does not have (it has {', '.join(quote(f.name) for f in found.fields)}).",
                details={"column": column.name},
            )
        # Nested nullability aside too: the catalog's read schema has it nullable (a CTAS
        # of ``array(id)`` writes Delta's ``containsNull = false``).
        if nullable_inside(match.dataType) != nullable_inside(column.dataType):
            raise CoreError(
                f"Table {shown} declares the column {quote(column.name)} as "
                f"{column.dataType.simpleString()}, but its Delta table holds "
                f"{match.dataType.simpleString()}; declare the table with the Delta table's type.",
                details={"column": column.name},
            )


# How often a read is listed again when a commit swapped the manifest while Spark listed it.
LISTING_ATTEMPTS = 5


class DataChanging(CoreError):
    """A table's data kept changing while a job listed it (a job error)."""

    code = "DATA_CHANGING"


def load_committed(reader: Any, path: str, options: dict[str, str], shown: str) -> Any:
    """``reader.load`` of what the manifest lists, listed by Spark while the manifest did not
    change. Spark lists the files when the frame is made (classic Spark) and takes a listed
    directory that vanished meanwhile for an empty one: an OVERWRITE that committed and
    deleted the old entries between the manifest's read and the listing would give a
    silently empty table. Reading the manifest again after the listing catches that: the
    old entries are only deleted after a new manifest replaced them."""
    paths: str | list[str] = path
    for _ in range(LISTING_ATTEMPTS):
        paths = committed_paths(path)
        if isinstance(paths, list):
            options["basePath"] = path  # ours, not the table's (a refused user option)
        frame = reader.options(**options).load(paths)
        if committed_paths(path) == paths:
            return frame
    raise DataChanging(
        f"The data of {shown} changed {LISTING_ATTEMPTS} times while it was being listed "
        "(commits into the table); run the statement again."
    )


def committed_paths(path: str) -> str | list[str]:
    """What Spark reads of a table's (checked, resolved) path: the path itself, or — once
    Tessera committed into it — exactly the entries its manifest lists (``tabledata.manifest``),
    so that a commit becomes visible in one step. ``register_table`` reads the entries with
    ``basePath`` = the path, which keeps the partition values of ``k=v`` directories."""
    with locations.refusals(f"The data of '{path}' cannot be read"):
        found = manifest.read(path)
    if found is None:
        return path
    return manifest.read_paths(path, found.entries)


def register_view(spark: SparkSession, relation: RelationPlan) -> None:
    """The view's query (rewritten to the plan's aliases), checked as Spark parses it."""
    frame = sqlguard.guard(spark).sql(relation.sql)
    frame.createOrReplaceTempView(relation.alias)


def register_relations(
    spark: SparkSession, relations: Iterable[RelationPlan], session_id: Any = None
) -> None:
    """Register relations in their (dependency) order as temporary views named ``alias``."""
    for relation in relations:
        if relation.kind == "view":
            register_view(spark, relation)
        else:
            register_table(spark, relation, session_id)


def _in_packages(module: str, packages: Iterable[str]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def load_python_function(implementation: str, packages: Iterable[str]) -> Any:
    """Import ``package.module.function``: the name passes the planner's own check (a dotted
    name inside an allowlisted package), and the object must be a function defined there,
    not a name the package merely imported (``tessera_udfs.TypeVar``)."""
    allowed = tuple(packages)
    try:
        dotted = check_udf_implementation(implementation, allowed)
    except CoreError as exc:
        raise CoreError(exc.message, details={"implementation": implementation.strip()}) from None
    module_name, _, attribute = dotted.rpartition(".")
    try:
        module = import_module(module_name)
    except ImportError as exc:
        raise CoreError(
            f"Python module '{module_name}' cannot be imported: {exc}.",
            details={"implementation": dotted},
        ) from None
    function = getattr(module, attribute, None)
    defined_in = str(getattr(function, "__module__", "") or "")
    if not callable(function) or not _in_packages(defined_in, allowed):
        raise CoreError(
            f"'{attribute}' is not a function defined in module '{module_name}' of an allowed "
            f"UDF package ({', '.join(allowed) or 'none configured'}).",
            details={"implementation": dotted},
        )
    return function


def python_return_type(function: Any, declared: str) -> str:
    """The declared return type, else the one the UDF carries (``@returns``), else STRING."""
    return declared or str(getattr(function, "spark_return_type", "") or "STRING")


def register_function(
    spark: SparkSession, function: FunctionPlan, udf_packages: Iterable[str]
) -> None:
    alias = function.alias
    if function.language == "python":
        implementation = load_python_function(function.implementation, udf_packages)
        return_type = python_return_type(implementation, function.return_type)
        spark.udf.register(alias, implementation, return_type)
        return
    parameters = ", ".join(f"{quote(str(n))} {t}" for n, t in function.parameters)
    body = function.body
    text = (
        f"CREATE OR REPLACE TEMPORARY FUNCTION {quote(alias)}({parameters}) "
        f"RETURNS {function.return_type} RETURN {body}"
    )
    # Spark must read exactly this definition, and the body only what the plan allows.
    sqlguard.guard(spark).check_function(text, alias, body)
    spark.sql(text)


def register_functions(
    spark: SparkSession, functions: Iterable[FunctionPlan], udf_packages: Iterable[str]
) -> None:
    packages = tuple(udf_packages)
    for function in functions:
        register_function(spark, function, packages)


def register_plan(
    spark: SparkSession,
    plan: Plan,
    properties: Mapping[str, Any],
    udf_packages: Iterable[str],
    session_id: Any = None,
) -> None:
    """Everything a plan needs before its SQL runs: properties, functions, then relations
    (functions first: a view's query or a computed column may call one). ``session_id``:
    the job's session, whose uploads alone its tables may read."""
    apply_properties(spark, properties)
    sqlguard.install(spark, plan)
    register_functions(spark, plan.functions, udf_packages)
    register_relations(spark, plan.relations, session_id)


def _display(item: RelationPlan | FunctionPlan) -> str:
    identifier = [part for part in item.identifier if part] or [item.alias or "?"]
    return ".".join(quote(str(part)) for part in identifier)


def alias_names(plan: Plan | None) -> dict[str, str]:
    """Internal alias → the object's quoted name, to make Spark's messages readable."""
    names: dict[str, str] = {}
    if plan is None:
        return names
    items: list[RelationPlan | FunctionPlan] = [*plan.relations, *plan.functions]
    for item in items:
        if item.alias:
            names[item.alias] = _display(item)
    target = plan.args.get("table") if plan.action in ROW_CHANGE_ACTIONS else None
    if isinstance(target, dict) and target.get("alias"):  # the table a change writes
        names[str(target["alias"])] = _display(RelationPlan.from_dict(target))
    return names
