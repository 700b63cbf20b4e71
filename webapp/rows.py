"""One row by equality, its SQL compiled once: the reads every call makes (its API token, its
session, its job).

Django compiles a queryset's SQL on every call: about half of the ≈ 1.2 ms such a read
costs here (docs/benchmarks.md, "HiveServer2"), paid by every REST request and by each of
the four to five HiveServer2 calls of one statement. A ``RowReader`` compiles its query once
per database and runs it with new values; the values are prepared, and the row converted
and built into a model, by Django's own field and backend code, so the result is the object
``Model.objects.select_related(…).filter(…).first()`` would give (tests/core/test_rows.py
holds them side by side).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, Model
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]  # not in the stubs

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    compiler: Any
    init_list: list[str]
    start: int
    end: int
    populators: list[Any]


class RowReader(Generic[M]):
    """``model``'s row whose ``fields`` equal the values given (at most one row: the fields
    must make a key, or the first by primary key is read), with ``select_related`` joined."""

    def __init__(self, model: type[M], *fields: str, select_related: Sequence[str] = ()) -> None:
        self._model = model
        self._fields: list[Field[Any, Any]] = [model._meta.get_field(f) for f in fields]  # type: ignore[misc]
        self._names = fields
        self._related = tuple(select_related)
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def get(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> M | None:
        if len(values) != len(self._fields):
            raise TypeError(f"{len(self._fields)} values expected, {len(values)} given")
        if any(value is None for value in values):
            return None  # `= NULL` matches no row
        compiled = self._compiled.get(using) or self._compile(using, values)
        connection = connections[using]
        params = [
            field.get_db_prep_value(field.get_prep_value(value), connection, prepared=True)
            for field, value in zip(self._fields, values, strict=True)
        ]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            found = cursor.fetchone()
        if found is None:
            return None
        row = next(iter(compiled.compiler.results_iter([[found]])))
        obj: M = self._model.from_db(using, compiled.init_list, row[compiled.start : compiled.end])
        for populator in compiled.populators:
            populator.populate(row, obj)
        return obj

    def _compile(self, using: str, values: Sequence[Any]) -> _Compiled:
        """The query compiled with the first call's values (only its text is kept)."""
        with self._lock:
            if using in self._compiled:
                return self._compiled[using]
            queryset = self._model._default_manager.using(using).select_related(*self._related)
            for name, value in zip(self._names, values, strict=True):
                queryset = queryset.filter(**{name: value})  # one each: parameters in order
            compiler = queryset.order_by("pk")[:1].query.get_compiler(using=using)
            sql, params = compiler.as_sql()
            if len(params) != len(self._names):  # a filter Django did not make one parameter
                raise ValueError(f"{self._model.__name__} {self._names}: {len(params)} parameters")
            info = compiler.klass_info
            select = compiler.select
            start, end = info["select_fields"][0], info["select_fields"][-1] + 1
            compiled = _Compiled(
                sql=sql,
                compiler=compiler,
                init_list=[column[0].target.attname for column in select[start:end]],
                start=start,
                end=end,
                populators=get_related_populators(info, select, using),
            )
            self._compiled[using] = compiled
            return compiled
