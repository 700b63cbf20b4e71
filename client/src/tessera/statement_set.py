"""``StatementSet``: inserts collected and run as one job, all or nothing
(``EXECUTE STATEMENT SET``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError

from tessera.errors import ParseError, ValidationError
from tessera.sql import DIALECT

if TYPE_CHECKING:
    from tessera.environment import TableEnvironment
    from tessera.result import TableResult
    from tessera.table import Table


class StatementSet:
    """Inserts collected and run as ONE job, all or nothing (``EXECUTE STATEMENT SET``)."""

    def __init__(self, env: TableEnvironment) -> None:
        self._env = env
        self._inserts: list[str] = []

    def add_insert(
        self, path: str, table: Table, overwrite: bool = False, *, by_name: bool = False
    ) -> StatementSet:
        """Add ``INSERT INTO|OVERWRITE path`` of a table (``by_name``: columns by name)."""
        self._inserts.append(table.insert_sql(path, overwrite, by_name=by_name))
        return self

    def add_insert_sql(self, sql: str) -> StatementSet:
        """Add one ``INSERT`` statement written in SQL."""
        text = sql.strip().rstrip(";").strip()
        try:
            parsed = [p for p in sqlglot.parse(text, dialect=DIALECT) if p is not None]
        except SqlglotParseError as exc:
            raise ParseError(
                "PARSE_ERROR", f"Could not parse {sql!r}: {exc}", {"text": sql}
            ) from exc
        if len(parsed) != 1 or not isinstance(parsed[0], exp.Insert):
            raise ValidationError(
                "VALIDATION_ERROR", f"A statement set takes one INSERT at a time, not {sql!r}."
            )
        self._inserts.append(text)
        return self

    @property
    def sql(self) -> str:
        """The ``EXECUTE STATEMENT SET`` statement."""
        body = "".join(f"  {insert};\n" for insert in self._inserts)
        return f"EXECUTE STATEMENT SET\nBEGIN\n{body}END"

    def execute(self) -> TableResult:
        """Run every insert as one job: all targets are committed, or none.

        The job is returned even when it later fails (``status`` ``FAILED``; ``wait()``
        raises its error); a statement set the server refuses before it runs raises here."""
        if not self._inserts:
            raise ValidationError("VALIDATION_ERROR", "The statement set has no inserts.")
        return self._env._submit(self.sql)
