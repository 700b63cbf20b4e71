// Pure logic of the result view: cell text, column widths, the virtual window, paging and the
// chart's scales (unit-tested in model.test.ts).

/** Rows per page fetched from GET /jobs/{id}/result. */
export const PAGE_SIZE = 1000;
/** Fixed row height of the grid, in pixels (virtualisation depends on it). */
export const ROW_HEIGHT = 26;
/** Characters shown in a cell before it is cut (the full value is in the title). */
export const CELL_MAX_CHARS = 200;

/** The text of a value: null → null (shown as NULL), objects as JSON, the rest as text. */
export function cellText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The shown part of a cell's text and whether it was cut. */
export function truncate(text: string, max: number = CELL_MAX_CHARS): { shown: string; cut: boolean } {
  const firstLine = text.split(/\r?\n/, 1)[0];
  if (firstLine.length <= max && firstLine.length === text.length) return { shown: text, cut: false };
  return { shown: firstLine.slice(0, max) + "…", cut: true };
}

const NUMERIC = /^(tinyint|smallint|int|integer|bigint|long|short|byte|float|real|double|decimal|dec|numeric)\b/i;

/** Whether a Spark SQL type is numeric (bars and lines can be drawn from it). */
export function isNumericType(dataType: string): boolean {
  return NUMERIC.test(dataType.trim());
}

/** A value as a number for charts: numbers, numeric strings (decimals come as strings). */
export function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  return null;
}

/** Column widths in pixels from the header and a sample of the rows. */
export function columnWidths(
  columns: { name: string; data_type: string }[],
  rows: unknown[][],
  { charPx = 7.6, min = 64, max = 360, sample = 200 } = {},
): number[] {
  return columns.map((column, index) => {
    let chars = Math.max(column.name.length, column.data_type.length + 1);
    const step = Math.max(1, Math.floor(rows.length / sample));
    for (let r = 0; r < rows.length; r += step) {
      const text = cellText(rows[r]?.[index]);
      chars = Math.max(chars, text === null ? 4 : Math.min(text.length, CELL_MAX_CHARS));
    }
    return Math.round(Math.min(max, Math.max(min, chars * charPx + 20)));
  });
}

/** The rows to render for a scroll position: [start, end) with some overscan. */
export function visibleWindow(
  scrollTop: number,
  viewportHeight: number,
  rowCount: number,
  rowHeight: number = ROW_HEIGHT,
  overscan = 8,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(rowCount, first - overscan));
  const end = Math.max(start, Math.min(rowCount, first + count + overscan));
  return { start, end };
}

/** "rows X–Y of N" for a page (1-based, inclusive). */
export function pageRange(pageIndex: number, rowsOnPage: number, pageSize: number = PAGE_SIZE) {
  const first = pageIndex * pageSize + 1;
  return { first: rowsOnPage === 0 ? 0 : first, last: pageIndex * pageSize + rowsOnPage };
}

/** Round tick values covering [min, max], about `count` of them. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  if (min > max) [min, max] = [max, min];
  const raw = (max - min) / Math.max(1, count);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const fraction = raw / power;
  const step = (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10) * power;
  const start = Math.floor(min / step) * step;
  const stop = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let v = start; v <= stop + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** A tick label: compact for large and small numbers. */
export function formatTick(value: number): string {
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e9 || abs < 1e-3)) return value.toExponential(1);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(4))}M`;
  if (abs >= 1e4) return `${Number((value / 1e3).toPrecision(4))}k`;
  return String(Number(value.toPrecision(6)));
}

/** Indices of labels to show so that at most `max` appear, evenly spread. */
export function labelIndices(count: number, max: number): number[] {
  if (count <= 0) return [];
  if (count <= max) return Array.from({ length: count }, (_, i) => i);
  const step = Math.ceil(count / max);
  const out: number[] = [];
  for (let i = 0; i < count; i += step) out.push(i);
  return out;
}

export interface Series {
  name: string;
  values: (number | null)[];
}

/** X labels/values and one series per Y column from the rows of a page. */
export function chartData(
  rows: unknown[][],
  xIndex: number,
  yIndices: number[],
  columns: { name: string }[],
): { x: (string | null)[]; xNumbers: (number | null)[]; series: Series[] } {
  return {
    x: rows.map((row) => cellText(row[xIndex])),
    xNumbers: rows.map((row) => toNumber(row[xIndex])),
    series: yIndices.map((index) => ({
      name: columns[index]?.name ?? String(index),
      values: rows.map((row) => toNumber(row[index])),
    })),
  };
}

/** One field of tab-separated text as spreadsheets read it: NULL is empty, and a value with
 * a tab, a line break or a double quote is quoted (quotes doubled). */
export function tsvField(value: unknown): string {
  const text = cellText(value) ?? "";
  return /[\t\n\r"]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as tab-separated text with a header line, for the clipboard. */
export function toTsv(columns: { name: string }[], rows: unknown[][]): string {
  const lines = [columns.map((column) => tsvField(column.name))];
  for (const row of rows) lines.push(columns.map((_, i) => tsvField(row[i])));
  return lines.map((line) => line.join("\t")).join("\n") + "\n";
}

/** The scrollTop that brings row `row` into a viewport (unchanged when it is in view). */
export function scrollToShow(row: number, scrollTop: number, viewport: number, header: number): number {
  const top = row * ROW_HEIGHT;
  const visible = Math.max(ROW_HEIGHT, viewport - header);
  if (top < scrollTop) return top;
  if (top + ROW_HEIGHT > scrollTop + visible) return top + ROW_HEIGHT - visible;
  return scrollTop;
}
