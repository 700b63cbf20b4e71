"""Spark's session-scoped SQL-semantics settings a session may ``SET`` (issue 36, item 4).

Each key here changes only how Spark reads and evaluates the statement's own SQL (which
aliases ``GROUP BY`` sees, how a decimal's precision is cut, how a set operation binds,
which legacy behaviour a function keeps); none names a file, a directory, a class, a
memory size, a thread or anything another user's job shares. The allow-list stays closed:
a key not listed here (or in ``core.session_properties``) is refused, and the worker
applies only listed keys (``engine.registration.apply_properties``). docs/security.md §4
lists each key with its reason, and the keys refused on purpose with theirs.

Pure: data only. ``core.session_properties`` turns these into its ``PropertySpec`` rows.
"""

from __future__ import annotations

# (key, what it changes) — booleans, ``true``/``false``.
BOOLEAN_KEYS: tuple[tuple[str, str], ...] = (
    ("spark.sql.groupByAliases", "GROUP BY may name a SELECT list alias."),
    ("spark.sql.groupByOrdinal", "GROUP BY 1 names the first SELECT list item."),
    ("spark.sql.orderByOrdinal", "ORDER BY 1 names the first SELECT list item."),
    ("spark.sql.crossJoin.enabled", "Joins without a condition are allowed."),
    (
        "spark.sql.legacy.setopsPrecedence.enabled",
        "Set operations bind left to right (INTERSECT no tighter than UNION).",
    ),
    (
        "spark.sql.legacy.parser.havingWithoutGroupByAsWhere",
        "HAVING without GROUP BY filters rows, as WHERE.",
    ),
    (
        "spark.sql.decimalOperations.allowPrecisionLoss",
        "Decimal arithmetic rounds to fit 38 digits instead of returning NULL.",
    ),
    ("spark.sql.legacy.allowParameterlessCount", "count() without arguments counts rows."),
    (
        "spark.sql.legacy.allowStarWithSingleTableIdentifierInCount",
        "count(t.*) counts rows.",
    ),
    ("spark.sql.legacy.sizeOfNull", "size(NULL) is -1, not NULL."),
    (
        "spark.sql.legacy.statisticalAggregate",
        "stddev and variance of one row are NaN, not NULL.",
    ),
    (
        "spark.sql.legacy.castComplexTypesToString.enabled",
        "Arrays, maps and structs cast to strings in Spark 2's form.",
    ),
    ("spark.sql.legacy.interval.enabled", "Interval literals are calendar intervals."),
    (
        "spark.sql.legacy.typeCoercion.datetimeToString.enabled",
        "Dates and timestamps compared with strings as strings.",
    ),
    (
        "spark.sql.legacy.followThreeValuedLogicInArrayExists",
        "exists() over an array with NULLs answers NULL, not false.",
    ),
    (
        "spark.sql.legacy.exponentLiteralAsDecimal.enabled",
        "Literals such as 1E2 are decimals, not doubles.",
    ),
    (
        "spark.sql.legacy.createEmptyCollectionUsingStringType",
        "array() and map() without arguments hold strings.",
    ),
    ("spark.sql.legacy.allowHashOnMapType", "hash() accepts maps."),
    ("spark.sql.legacy.integerGroupingId", "grouping_id() is an INT, not a BIGINT."),
    (
        "spark.sql.legacy.groupingIdWithAppendedUserGroupBy",
        "grouping_id() counts GROUP BY columns added to grouping sets.",
    ),
    (
        "spark.sql.legacy.percentileDiscCalculation",
        "percentile_disc computes as before Spark 3.3.",
    ),
    (
        "spark.sql.legacy.lpadRpadAlwaysReturnString",
        "lpad and rpad of binary values return strings.",
    ),
    (
        "spark.sql.legacy.inSubqueryNullability",
        "IN (subquery) is nullable as before Spark 3.3.",
    ),
    (
        "spark.sql.legacy.scalarSubqueryCountBugBehavior",
        "count() in a correlated scalar subquery over no rows is NULL, as before.",
    ),
    (
        "spark.sql.ansi.relationPrecedence",
        "JOIN binds tighter than a comma in FROM.",
    ),
)

# (key, its values in Spark's spelling, what it changes) — case-insensitive choices.
CHOICE_KEYS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "spark.sql.legacy.timeParserPolicy",
        ("EXCEPTION", "CORRECTED", "LEGACY"),
        "How dates and timestamps are parsed and formatted from text (Spark 2's parser).",
    ),
    (
        "spark.sql.mapKeyDedupPolicy",
        ("EXCEPTION", "LAST_WIN"),
        "What a map built with a repeated key does: fail, or keep the last value.",
    ),
)

# Keys Spark itself no longer knows: SET answers Spark's own sentence, not the allow-list's.
REMOVED_KEYS: dict[str, str] = {
    "spark.sql.ansi.strictIndexOperator": "3.4.0",
}


def removed_key_message(key: str) -> str | None:
    """Spark's sentence for a key it removed (None for any other key)."""
    version = REMOVED_KEYS.get(key)
    if version is None:
        return None
    return (
        f"Spark removed this SQL config in version {version} (Spark's own SET refuses it, "
        "and it changes nothing any more)."
    )
