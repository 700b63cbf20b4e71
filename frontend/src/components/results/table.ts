// Pure logic of the grid's tools: sorting and filtering a page (as the server does over the
// whole result), column stats, copying as TSV/CSV/Markdown, the value viewer's text, pinned
// column order and cell selections (unit-tested in table.test.ts).
import { cellText, isNumericType, toNumber, tsvField } from "./model";

export type SortDir = "asc" | "desc";
export interface SortSpec {
  column: number;
  dir: SortDir;
}
export type FilterOp = "contains" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "is_null" | "not_null";
export interface FilterSpec {
  column: number;
  op: FilterOp;
  value: string;
}
interface Column {
  name: string;
  data_type: string;
}

export const FILTER_OPS: { op: FilterOp; label: string; needsValue: boolean }[] = [
  { op: "contains", label: "contains", needsValue: true },
  { op: "eq", label: "=", needsValue: true },
  { op: "ne", label: "≠", needsValue: true },
  { op: "lt", label: "<", needsValue: true },
  { op: "le", label: "≤", needsValue: true },
  { op: "gt", label: ">", needsValue: true },
  { op: "ge", label: "≥", needsValue: true },
  { op: "is_null", label: "is NULL", needsValue: false },
  { op: "not_null", label: "is not NULL", needsValue: false },
];

/** ARRAY, MAP and STRUCT values cannot be sorted or compared, only looked at. */
export function isNestedType(dataType: string): boolean {
  return /^(array|map|struct)\s*</i.test(dataType.trim());
}

export function isTimeType(dataType: string): boolean {
  return /^(date|timestamp)/i.test(dataType.trim());
}

/** Two non-NULL values of one column in order: numbers as numbers, the rest as text (ISO dates
 * and times order as text). */
export function compareValues(a: unknown, b: unknown, dataType: string): number {
  if (isNumericType(dataType)) {
    const x = toNumber(a);
    const y = toNumber(b);
    if (x !== null && y !== null) return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  const s = cellText(a) ?? "";
  const t = cellText(b) ?? "";
  return s < t ? -1 : s > t ? 1 : 0;
}

/** The rows in the sort's order (a stable sort; NULLs last in both directions). */
export function sortRows<T extends unknown[]>(rows: T[], sort: SortSpec | null, columns: Column[]): T[] {
  if (!sort) return rows;
  const type = columns[sort.column]?.data_type ?? "";
  const sign = sort.dir === "desc" ? -1 : 1;
  return rows
    .map((row, index) => ({ row, index }))
    .sort((p, q) => {
      const a = p.row[sort.column];
      const b = q.row[sort.column];
      const an = a === null || a === undefined;
      const bn = b === null || b === undefined;
      if (an || bn) return an && bn ? p.index - q.index : an ? 1 : -1;
      return sign * compareValues(a, b, type) || p.index - q.index;
    })
    .map((entry) => entry.row);
}

/** Whether a value passes a filter, as the server decides it. */
export function passes(value: unknown, filter: FilterSpec, dataType: string): boolean {
  const isNull = value === null || value === undefined;
  if (filter.op === "is_null") return isNull;
  if (filter.op === "not_null") return !isNull;
  if (isNull) return false;
  if (filter.op === "contains")
    return (cellText(value) ?? "").toLowerCase().includes(filter.value.toLowerCase());
  let order: number;
  if (isNumericType(dataType)) {
    const x = toNumber(value);
    const y = toNumber(filter.value);
    if (x === null || y === null) return false;
    order = x < y ? -1 : x > y ? 1 : 0;
  } else if (typeof value === "boolean") {
    order = Number(value) - Number(filter.value.toLowerCase() === "true");
  } else {
    order = compareValues(value, filter.value, dataType);
  }
  switch (filter.op) {
    case "eq":
      return order === 0;
    case "ne":
      return order !== 0;
    case "lt":
      return order < 0;
    case "le":
      return order <= 0;
    case "gt":
      return order > 0;
    case "ge":
      return order >= 0;
  }
}

/** The rows passing every filter. */
export function filterRows<T extends unknown[]>(rows: T[], filters: FilterSpec[], columns: Column[]): T[] {
  if (filters.length === 0) return rows;
  return rows.filter((row) =>
    filters.every((f) => passes(row[f.column], f, columns[f.column]?.data_type ?? "")),
  );
}

/** The query parameters of a sort and filters, for GET /jobs/{id}/result and …/chart. */
export function sortParam(sort: SortSpec | null, columns: Column[]): string | null {
  return sort ? `${columns[sort.column]?.name}:${sort.dir}` : null;
}

export function filterParam(filter: FilterSpec, columns: Column[]): string {
  const name = columns[filter.column]?.name ?? "";
  const needs = FILTER_OPS.find((o) => o.op === filter.op)?.needsValue;
  return needs ? `${name}:${filter.op}:${filter.value}` : `${name}:${filter.op}`;
}

/** The query string of a download: the grid's sort and filters and the file's name. */
export function downloadQuery(sort: string | null, filters: string[], name: string): string {
  const search = new URLSearchParams();
  if (sort) search.set("sort", sort);
  for (const f of filters) search.append("filter", f);
  if (name.trim()) search.set("name", name.trim());
  const text = search.toString();
  return text ? `?${text}` : "";
}

export function filterLabel(filter: FilterSpec, columns: Column[]): string {
  const op = FILTER_OPS.find((o) => o.op === filter.op);
  const name = columns[filter.column]?.name ?? "?";
  return op?.needsValue ? `${name} ${op.label} ${filter.value}` : `${name} ${op?.label ?? filter.op}`;
}

export interface ColumnStats {
  values: number;
  nulls: number;
  distinct: number;
  min: string | null;
  max: string | null;
}

/** Stats of one column over some rows: NULLs, distinct values, min and max (none for nested
 * columns). */
export function columnStats(rows: unknown[][], column: number, dataType: string): ColumnStats {
  let nulls = 0;
  const seen = new Set<string>();
  let min: unknown = null;
  let max: unknown = null;
  const ordered = !isNestedType(dataType);
  for (const row of rows) {
    const value = row[column];
    if (value === null || value === undefined) {
      nulls += 1;
      continue;
    }
    seen.add(cellText(value) ?? "");
    if (!ordered) continue;
    if (min === null || compareValues(value, min, dataType) < 0) min = value;
    if (max === null || compareValues(value, max, dataType) > 0) max = value;
  }
  return { values: rows.length, nulls, distinct: seen.size, min: cellText(min), max: cellText(max) };
}

export type CopyFormat = "tsv" | "csv" | "markdown";

/** One CSV field (RFC 4180): NULL is empty; a comma, quote or line break is quoted. */
export function csvField(value: unknown): string {
  const text = cellText(value) ?? "";
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One Markdown table cell: pipes and backslashes escaped, line breaks as <br>, NULL shown. */
export function markdownCell(value: unknown): string {
  const text = cellText(value);
  if (text === null) return "NULL";
  return text.replaceAll("\\", "\\\\").replaceAll("|", "\\|").replace(/\r?\n/g, "<br>");
}

/** Rows with a header line as TSV, CSV or a Markdown table. */
export function formatRows(columns: { name: string }[], rows: unknown[][], format: CopyFormat): string {
  if (format === "markdown") {
    const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
    const lines = [
      line(columns.map((c) => markdownCell(c.name))),
      line(columns.map(() => "---")),
      ...rows.map((row) => line(columns.map((_, i) => markdownCell(row[i])))),
    ];
    return lines.join("\n") + "\n";
  }
  const field = format === "csv" ? csvField : tsvField;
  const sep = format === "csv" ? "," : "\t";
  const end = format === "csv" ? "\r\n" : "\n";
  const lines = [columns.map((c) => field(c.name)).join(sep)];
  for (const row of rows) lines.push(columns.map((_, i) => field(row[i])).join(sep));
  return lines.join(end) + end;
}

/** The text the value viewer shows: JSON (objects, arrays, and text that is a JSON object or
 * array) pretty-printed, everything else as it is. */
export function viewerText(value: unknown): { text: string; json: boolean } {
  if (value === null || value === undefined) return { text: "NULL", json: false };
  if (typeof value === "object") return { text: JSON.stringify(value, null, 2), json: true };
  const text = cellText(value) ?? "";
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed) && trimmed.length < 5_000_000) {
    try {
      return { text: JSON.stringify(JSON.parse(trimmed), null, 2), json: true };
    } catch {
      // not JSON: shown as text
    }
  }
  return { text, json: false };
}

/** The display order of the columns: pinned ones first (in the order pinned), then the rest. */
export function columnOrder(count: number, pinned: number[]): number[] {
  const kept = pinned.filter((i) => i >= 0 && i < count);
  const rest = Array.from({ length: count }, (_, i) => i).filter((i) => !kept.includes(i));
  return [...kept, ...rest];
}

/** Left offsets of the pinned columns (they stick after the row numbers). */
/** The pinned columns with ``column`` pinned, or unpinned when it was. */
export function togglePinned(pinned: number[], column: number): number[] {
  return pinned.includes(column) ? pinned.filter((c) => c !== column) : [...pinned, column];
}

/** Column widths with ``column``'s set to ``width`` (null: back to its default). */
export function withWidth(widths: Record<number, number>, column: number, width: number | null): Record<number, number> {
  const next = { ...widths };
  if (width === null) delete next[column];
  else next[column] = width;
  return next;
}

export function pinnedOffsets(order: number[], pinnedCount: number, widths: number[], start: number): Map<number, number> {
  const offsets = new Map<number, number>();
  let left = start;
  for (const column of order.slice(0, pinnedCount)) {
    offsets.set(column, left);
    left += widths[column] ?? 0;
  }
  return offsets;
}

export interface Cell {
  row: number;
  /** Position in the display order. */
  col: number;
}

/** The rectangle between two cells, inclusive. */
export function selectionRect(anchor: Cell, focus: Cell) {
  return {
    top: Math.min(anchor.row, focus.row),
    bottom: Math.max(anchor.row, focus.row),
    left: Math.min(anchor.col, focus.col),
    right: Math.max(anchor.col, focus.col),
  };
}

/** The columns and rows of a selection, for copying. */
export function selectedBlock(
  rows: unknown[][],
  columns: { name: string }[],
  order: number[],
  anchor: Cell,
  focus: Cell,
): { columns: { name: string }[]; rows: unknown[][] } {
  const r = selectionRect(anchor, focus);
  const picked = order.slice(r.left, r.right + 1);
  return {
    columns: picked.map((i) => columns[i]),
    rows: rows.slice(r.top, r.bottom + 1).map((row) => picked.map((i) => row[i])),
  };
}

/** A new column width from a drag, within bounds. */
export function resized(width: number, delta: number, min = 48, max = 1200): number {
  return Math.round(Math.max(min, Math.min(max, width + delta)));
}
