// Pure logic of the chart: its config (kept with a saved query), defaults, the request to
// GET /jobs/{id}/result/chart, time scales with readable ticks, and label room
// (unit-tested in chartModel.test.ts).
import { isNumericType } from "./model";
import { isNestedType, isTimeType } from "./table";

export type ChartType = "bar" | "line" | "area" | "scatter" | "pie";
export type Aggregation = "none" | "sum" | "avg" | "count" | "min" | "max";
export const CHART_TYPES: ChartType[] = ["bar", "line", "area", "scatter", "pie"];
export const AGGREGATIONS: Aggregation[] = ["none", "sum", "avg", "count", "min", "max"];

/** The chart config as a saved query keeps it (column names, not positions). */
export interface ChartConfig {
  type: ChartType;
  x: string;
  y: string[];
  aggregation: Aggregation;
}

interface Column {
  name: string;
  data_type: string;
}

/** Rows up to which a chart shows the rows themselves by default; above, it aggregates. */
export const RAW_LIMIT = 500;

/** A first chart for a result: X the first time column (else the first text column, else the
 * first), Y the first numeric other column; a line over time, else bars; the rows themselves
 * when few, else aggregated (a sum per text X, an average per number or time bin). */
export function defaultChart(columns: Column[], rowCount: number): ChartConfig {
  const usable = columns.filter((c) => !isNestedType(c.data_type));
  const x =
    usable.find((c) => isTimeType(c.data_type)) ??
    usable.find((c) => !isNumericType(c.data_type)) ??
    usable[0] ??
    columns[0];
  const y = columns.find((c) => c !== x && isNumericType(c.data_type));
  const time = !!x && isTimeType(x.data_type);
  const text = !!x && !time && !isNumericType(x.data_type);
  return {
    type: time ? "line" : "bar",
    x: x?.name ?? "",
    y: y ? [y.name] : [],
    aggregation: rowCount <= RAW_LIMIT ? "none" : text ? "sum" : "avg",
  };
}

/** A saved config still fits the result when its columns are there; else null. */
export function fittingChart(config: ChartConfig | null | undefined, columns: Column[]): ChartConfig | null {
  if (!config) return null;
  const names = new Set(columns.map((c) => c.name));
  if (!names.has(config.x) || !config.y.every((n) => names.has(n))) return null;
  return config;
}

/** How many points to ask for: pies few, bars as many as fit, lines more. */
export function pointsFor(type: ChartType, plotWidth: number): number {
  if (type === "pie") return 12;
  if (type === "bar") return Math.max(2, Math.min(200, Math.floor(plotWidth / 6)));
  return Math.max(2, Math.min(1000, Math.floor(plotWidth / 2)));
}

/** The query string of a chart request. */
export function chartQuery(config: ChartConfig, points: number, filters: string[]): string {
  const search = new URLSearchParams();
  search.set("x", config.x);
  for (const y of config.y) search.append("y", y);
  search.set("aggregation", config.aggregation);
  search.set("points", String(points));
  for (const f of filters) search.append("filter", f);
  return `?${search.toString()}`;
}

/** An ISO date or time from the server as epoch milliseconds (times without a zone read as
 * UTC, as they are shown). */
export function parseTime(value: unknown): number | null {
  if (typeof value !== "string" || value === "") return null;
  const zoned = /([zZ]|[+-]\d\d:?\d\d)$/.test(value) || /^\d{4}-\d\d-\d\d$/.test(value);
  const ms = Date.parse(zoned ? value : `${value}Z`);
  return Number.isFinite(ms) ? ms : null;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS: { ms: number; months?: number }[] = [
  ...[1, 2, 5, 10, 15, 30].map((s) => ({ ms: s * SECOND })),
  ...[1, 2, 5, 10, 15, 30].map((m) => ({ ms: m * MINUTE })),
  ...[1, 2, 3, 6, 12].map((h) => ({ ms: h * HOUR })),
  ...[1, 2, 7, 14].map((d) => ({ ms: d * DAY })),
  ...[1, 2, 3, 6].map((m) => ({ ms: m * 30 * DAY, months: m })),
  ...[1, 2, 5, 10, 25, 50, 100].map((y) => ({ ms: y * 365 * DAY, months: 12 * y })),
];

/** Round ticks over [min, max] (UTC): whole seconds, minutes, hours, days, months or years,
 * about `count` of them, and the step used. */
export function timeTicks(min: number, max: number, count = 6): { ticks: number[]; step: number; months: number } {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { ticks: [], step: DAY, months: 0 };
  if (max <= min) return { ticks: [min], step: DAY, months: 0 };
  const wanted = (max - min) / Math.max(1, count);
  const step = STEPS.find((s) => s.ms >= wanted) ?? STEPS[STEPS.length - 1];
  const ticks: number[] = [];
  if (step.months) {
    // Month boundaries at or after min, aligned to the step (years to multiples of it).
    const first = new Date(min);
    let total = first.getUTCFullYear() * 12 + first.getUTCMonth();
    if (Date.UTC(Math.floor(total / 12), total % 12, 1) < min) total += 1;
    total = Math.ceil(total / step.months) * step.months;
    for (let k = total; ; k += step.months) {
      const t = Date.UTC(Math.floor(k / 12), k % 12, 1);
      if (t > max) break;
      ticks.push(t);
    }
  } else {
    for (let t = Math.ceil(min / step.ms) * step.ms; t <= max; t += step.ms) ticks.push(t);
  }
  return { ticks, step: step.ms, months: step.months ?? 0 };
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad = (n: number) => String(n).padStart(2, "0");

/** A tick label that says as much as the step needs: 2024, Mar 2024, Mar 5, Mar 5 14:00,
 * 14:05:30. */
export function formatTime(ms: number, step: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = MONTHS[d.getUTCMonth()];
  const day = d.getUTCDate();
  if (step >= 365 * DAY) return String(year);
  if (step >= 28 * DAY) return `${month} ${year}`;
  if (step >= DAY) return `${month} ${day}, ${year}`;
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (step >= MINUTE) return `${month} ${day} ${hm}`;
  return `${hm}:${pad(d.getUTCSeconds())}`;
}

/** A point's X as a tooltip shows it: a time to the second (or the day for dates). */
export function formatTimeFull(ms: number): string {
  const d = new Date(ms);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (ms % DAY === 0) return date;
  return `${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Room for labels of `chars` characters at 11px: the width of the longest, and the height
 * it takes rotated by `degrees`. */
export function labelRoom(labels: string[], degrees = 0, charPx = 6.4): { width: number; height: number } {
  const longest = labels.reduce((m, l) => Math.max(m, l.length), 0);
  const width = longest * charPx;
  const rad = (Math.abs(degrees) * Math.PI) / 180;
  return { width, height: Math.ceil(width * Math.sin(rad) + 14 * Math.cos(rad)) };
}
