"""Values Python cannot hold (dates and timestamps beyond its years 1 … 9999) as text.

The worker serves such columns as Spark's own text already (``engine.readable``); a result
stored otherwise (a ``row_limit`` beyond the collected size, an older file) is still read
here, never a failed page.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]


def _civil(days: int) -> tuple[int, int, int]:
    """Year, month and day of a day number (days since 1970-01-01, proleptic Gregorian, any
    year: H. Hinnant's ``civil_from_days``)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _year(year: int) -> str:
    """A year as Spark writes it: four digits, a sign beyond 9999 or before year 0."""
    if 0 <= year <= 9999:
        return f"{year:04d}"
    return f"{'+' if year > 0 else '-'}{abs(year):04d}"


def _far_day(days: int) -> str:
    year, month, day = _civil(days)
    return f"{_year(year)}-{month:02d}-{day:02d}"


def _far_instant(micros: int, zone: str | None) -> str:
    days, rest = divmod(micros, 86_400_000_000)
    seconds, fraction = divmod(rest, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{_far_day(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}"
    if fraction:
        text += f".{fraction:06d}"
    return text + ("+00:00" if zone else "")


def _as_numbers(kind: pa.DataType) -> tuple[pa.DataType, Any]:
    """``kind`` with its dates and timestamps as numbers (days, microseconds), and a function
    turning a Python value of that type into one with those numbers as their text."""
    types = pa.types
    if types.is_date32(kind):
        return pa.int32(), _far_day
    if types.is_timestamp(kind) and kind.unit == "us":
        zone = kind.tz
        return pa.int64(), lambda micros: _far_instant(micros, zone)
    if types.is_list(kind) or types.is_large_list(kind):
        inner, convert = _as_numbers(kind.value_type)
        maker = pa.large_list if types.is_large_list(kind) else pa.list_
        field = kind.value_field.with_type(inner)
        return maker(field), lambda items: [None if v is None else convert(v) for v in items]
    if types.is_map(kind):
        key, convert_key = _as_numbers(kind.key_type)
        item, convert_item = _as_numbers(kind.item_type)
        return pa.map_(key, item), lambda pairs: [
            (convert_key(k), None if v is None else convert_item(v)) for k, v in pairs
        ]
    if types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        converted = [(f, *_as_numbers(f.type)) for f in fields]
        return pa.struct([f.with_type(t) for f, t, _ in converted]), lambda obj: {
            f.name: None if obj[f.name] is None else convert(obj[f.name])
            for f, _, convert in converted
        }
    return kind, lambda value: value


def far_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column Python cannot hold as values (dates beyond its years 1 … 9999), its dates and
    timestamps (in UTC, as they are stored) as ISO-8601 text with a signed year, as Spark
    writes years; at any depth of arrays, maps and structs."""
    numbers, convert = _as_numbers(column.type)
    try:
        values = column.cast(numbers).to_pylist()
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, OverflowError, ValueError):
        return [None] * len(column)  # no cast Arrow knows: nothing this reader can show
    return [None if v is None else convert(v) for v in values]
