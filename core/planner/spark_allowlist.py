"""What Spark syntax the SQL guard lets through, by class name as Spark's parser builds it.

``core.planner.spark_guard`` walks Spark's parse of a statement and refuses every class
that is not listed here; ``REASONS`` says, in the words of the SQL reference, why a known
construct is refused. New Spark syntax is refused until it is reviewed and listed here.

Pure Python: nothing here imports pyspark or Django.
"""

from __future__ import annotations

_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
_ANALYSIS = "org.apache.spark.sql.catalyst.analysis."
_EXPRESSIONS = "org.apache.spark.sql.catalyst.expressions."

# Plan nodes a query may consist of, as Spark's parser builds them. Relations, CTEs and
# table-valued functions have their own rules below.
PLAN_CLASSES: frozenset[str] = frozenset(
    {
        _LOGICAL + name
        for name in (
            "Aggregate",
            "Deduplicate",
            "Distinct",
            "Except",
            "Expand",
            "Filter",
            "Generate",
            "GlobalLimit",
            "Intersect",
            "Join",
            "LateralJoin",
            "LimitAll",
            "LocalLimit",
            "LocalRelation",
            "Offset",
            "OneRowRelation",
            "Pivot",
            "Project",
            "RebalancePartitions",
            "Repartition",
            "RepartitionByExpression",
            "Sample",
            "Sort",
            "SubqueryAlias",
            "Tail",
            "Union",
            "UnresolvedHint",
            "UnresolvedWith",
            "Unpivot",
            "Window",
            "WithWindowDefinition",
        )
    }
    | {
        _ANALYSIS + name
        for name in (
            "UnresolvedHaving",
            "UnresolvedInlineTable",
            "UnresolvedQualify",
            "UnresolvedRelation",
            "UnresolvedSubqueryColumnAliases",
            "UnresolvedTVFAliases",
            "UnresolvedTableValuedFunction",
        )
    }
    | {_EXPRESSIONS + "PipeOperator"}
    | {
        _LOGICAL + "NearestByJoin",  # JOIN … EXACT|APPROX NEAREST n BY …
        _LOGICAL + "AsOfJoin",  # ASOF JOIN (when Spark's conf enables it)
        _LOGICAL + "UnresolvedBinBy",  # BIN BY (…)
        _ANALYSIS + "UnresolvedEventTimeWatermark",  # t WATERMARK ts DELAY OF … (inert in batch)
    }
)

# The row-level changes Spark's parser builds (MERGE INTO, UPDATE, DELETE FROM), with the
# field naming the table they write: allowed only as the root of a planned change (root
# ``dml``), whose target must be the plan's.
DML_PLAN_CLASSES: dict[str, str] = {
    _LOGICAL + "MergeIntoTable": "targetTable",
    _LOGICAL + "UpdateTable": "table",
    _LOGICAL + "DeleteFromTable": "table",
}
# A MERGE's actions and an UPDATE's assignments: allowed inside a planned change only.
DML_EXPRESSION_CLASSES: frozenset[str] = frozenset(
    _LOGICAL + name
    for name in (
        "Assignment",
        "DeleteAction",
        "InsertAction",
        "InsertStarAction",
        "UpdateAction",
        "UpdateStarAction",
    )
)

# Expression classes Spark's parser builds directly (function calls are UnresolvedFunction
# and checked by name). Anything in Catalyst's ``expressions.objects`` (reflection) or a UDF
# class is not here and never will be.
EXPRESSION_CLASSES: frozenset[str] = frozenset(
    {
        _ANALYSIS + name
        for name in (
            "UnresolvedAlias",
            "UnresolvedAttribute",
            "UnresolvedExtractValue",
            "UnresolvedFunction",
            "MultiAlias",  # generator(…) AS (a, b)
            "UnresolvedGenerator",
            "UnresolvedOrdinal",
            "UnresolvedPipeAggregateOrdinal",
            "UnresolvedRegex",
            "UnresolvedStar",
            "UnresolvedStarExceptOrReplace",
        )
    }
    | {
        _EXPRESSIONS + name
        for name in (
            "Add",
            "Alias",
            "And",
            "ArrayFilter",
            "Ascending$",
            "BitwiseAnd",
            "BitwiseNot",
            "BitwiseOr",
            "BitwiseXor",
            "AttributeReference",  # the columns of VALUES folded into a LocalRelation
            "CaseWhen",
            "Cast",
            "Coalesce",
            "Collate",
            "Concat",
            "CreateNamedStruct",
            "CurrentDate",
            "CurrentTimestamp",
            "CurrentRow$",
            "CurrentUser",
            "Cube",
            "Divide",
            "EqualNullSafe",
            "EqualTo",
            "Exists",
            "GreaterThan",
            "GreaterThanOrEqual",
            "GroupingSets",
            "ILike",
            "In",
            "InSubquery",
            "IntegralDivide",
            "IsNotNull",
            "IsNull",
            "LambdaFunction",
            "LateralSubquery",
            "LessThan",
            "LessThanOrEqual",
            "Like",
            "LikeAll",
            "LikeAny",
            "ListQuery",
            "Literal",
            "Multiply",
            "NamePlaceholder$",  # struct(t.*)
            "NamedArgumentExpression",
            "Not",
            "NotLikeAll",
            "NotLikeAny",
            "Or",
            "Overlay",
            "PipeExpression",
            "Remainder",
            "RLike",
            "Rollup",
            "RowFrame$",
            "RangeFrame$",
            "ScalarSubquery",
            "SortOrder",
            "SpecifiedWindowFrame",
            "StringLocate",
            "StringTrim",
            "StringTrimBoth",
            "StringTrimLeft",
            "StringTrimRight",
            "Substring",
            "Subtract",
            "UnaryMinus",
            "UnaryPositive",
            "UnboundedFollowing$",
            "UnboundedPreceding$",
            "UnresolvedCollation",
            "UnresolvedNamedLambdaVariable",
            "UnresolvedWindowExpression",
            "UnspecifiedFrame$",
            "WindowExpression",
            "WindowSpecDefinition",
        )
    }
    # |> SELECT with an aggregate: the pipe syntax builds these directly.
    | {_EXPRESSIONS + "aggregate.AggregateExpression", _EXPRESSIONS + "aggregate.AnyValue"}
    # Built by the parser from their own syntax (found in Spark 4.3's AstBuilder bytecode):
    # <<, >>, >>>; j:a.b; DATEADD/TIMESTAMPADD/DATEDIFF(unit, …); first(x)/last(x);
    # ILIKE ANY/ALL; CURRENT_PATH/CURRENT_TIME; UNNEST; JSON_TABLE; f(TABLE(t)).
    | {
        _EXPRESSIONS + name
        for name in (
            "ShiftLeft",
            "ShiftRight",
            "ShiftRightUnsigned",
            "SemiStructuredExtract",
            "TimestampAdd",
            "TimestampDiff",
            "aggregate.First",
            "aggregate.Last",
            "Lower",
            "CurrentPath",
            "CurrentTime",
            "Unnest",
            "JsonTable",
            "FunctionTableSubqueryArgumentExpression",
        )
    }
)

# Anonymous subclasses (IS [NOT] UNKNOWN: IsNull/IsNotNull with their own SQL text): the
# Scala compiler numbers them ($$anon$1, $$anon$2…) per source file, so match the prefix.
ANONYMOUS_EXPRESSIONS: tuple[str, ...] = (
    _EXPRESSIONS + "IsUnknown$$anon$",
    _EXPRESSIONS + "IsNotUnknown$$anon$",
)

# Other case classes that only carry data (names, ids, frame bounds…).
PRODUCT_CLASSES: frozenset[str] = frozenset(
    {
        "org.apache.spark.sql.catalyst.AliasIdentifier",
        "org.apache.spark.sql.catalyst.FunctionIdentifier",
        _EXPRESSIONS + "ExprId",
        _EXPRESSIONS + "NumericEvalContext",
        _EXPRESSIONS + "WindowSpecReference",
        _EXPRESSIONS + "JsonTableColumn",
        _LOGICAL + "BinByOutputAliases",
        "org.apache.spark.sql.catalyst.plans.NaturalJoin",
        "org.apache.spark.sql.catalyst.plans.UsingJoin",
        _LOGICAL + "JoinHint",
        "scala.Tuple2",
        "scala.Tuple3",
    }
)

# Values of literals and the like that the describer cannot take apart (and need not).
OPAQUE_CLASSES: frozenset[str] = frozenset(
    {
        "java.util.UUID",
        "org.apache.spark.sql.types.Decimal",
        "org.apache.spark.sql.types.Metadata",
        "scala.Enumeration$Val",  # evaluation modes (ANSI, TRY, LEGACY)
        "org.apache.spark.unsafe.types.CalendarInterval",
        "org.apache.spark.sql.catalyst.expressions.GenericInternalRow",
        "org.apache.spark.sql.catalyst.expressions.UnsafeRow",
        "[B",  # binary literals (X'…')
    }
)

# Functions that read a file or URL named in their options, with the position of their
# options argument: those options must be a literal map without the keys that do.
OPTION_MAP_FUNCTIONS: dict[str, int] = {"from_xml": 2, "schema_of_xml": 1, "to_xml": 1}
# Hints whose integer parameters are partition counts.
PARTITIONING_HINTS = frozenset({"REPARTITION", "REPARTITION_BY_RANGE", "REBALANCE", "COALESCE"})

# Table-valued functions a query may call: Spark's, but python_worker_logs (it reads the
# logs of Spark's Python workers, shared by every user). tests/engine/spark pins Spark's list.
TABLE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "collations",
        "range",
        "sql_keywords",
        "explode",
        "explode_outer",
        "inline",
        "inline_outer",
        "json_tuple",
        "posexplode",
        "posexplode_outer",
        "stack",
        "variant_explode",
        "variant_explode_outer",
    }
)

# Why a known construct is refused, in the words of the SQL reference (docs/statements.md).
REASONS: dict[str, str] = {
    "ScriptTransformation": "Script transforms (TRANSFORM … USING '…') are not allowed: they "
    "run external programs on the cluster.",
    "InsertIntoDir": "INSERT OVERWRITE DIRECTORY is not allowed: writing files by path "
    "bypasses the catalog.",
    "InsertIntoStatement": "INSERT inside a query is not allowed: Tessera runs writes itself.",
    "PlanWithUnresolvedIdentifier": "IDENTIFIER(…) is not allowed: names built from strings "
    "cannot be checked before the statement runs.",
    "ExpressionWithUnresolvedIdentifier": "IDENTIFIER(…) is not allowed: names built from "
    "strings cannot be checked before the statement runs.",
    "NamedParameter": "Parameter markers (:name) take values only in queries sent with "
    '"parameters"; this statement cannot have them.',
    "PosParameter": "Parameter markers (?) are not supported.",
    "UnresolvedWithCTERelations": "This form of WITH is not supported.",
}
