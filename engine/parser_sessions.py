"""On Spark Connect, each job session is paired with a classic session of this process's
(small) JVM whose parser, lexer and Hadoop configuration stand for it: the SQL guard parses
with it. Elsewhere a session stands for itself."""

from __future__ import annotations

import weakref

from pyspark.sql import SparkSession

from engine.runtimes import current_runtime, is_remote_session

# A Connect job session → the classic session whose parser judges its statements.
_parsers: weakref.WeakKeyDictionary[SparkSession, SparkSession] = weakref.WeakKeyDictionary()


def pair(session: SparkSession, parser: SparkSession) -> None:
    """Remember ``parser`` as the classic session that judges ``session``'s statements."""
    _parsers[session] = parser


def paired(spark: SparkSession) -> SparkSession | None:
    """The parser session paired with ``spark``, if any (a Connect job session)."""
    return _parsers.get(spark)


def parser_of(spark: SparkSession) -> SparkSession:
    """The classic session whose parser, lexer and Hadoop configuration stand for ``spark``'s:
    itself, or on Spark Connect the parser session paired with the job's session."""
    parser = _parsers.get(spark)
    if parser is not None:
        return parser
    if is_remote_session(spark):
        raise current_runtime().unsupported(
            "Checking a statement for a Spark Connect session the worker did not make"
        )
    return spark


def mirror_conf(spark: SparkSession, key: str, value: str) -> None:
    """``spark.conf.set(key, value)``, and the same on its parser session (Spark Connect),
    so that the guard parses under the settings the statement will run with."""
    spark.conf.set(key, value)
    parser = _parsers.get(spark)
    if parser is not None:
        parser.conf.set(key, value)
