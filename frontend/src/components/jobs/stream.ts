// Pure logic of the live view of streams (docs/api.md §5 "Streaming"): which state a
// streaming job is in, the series of its micro-batches (from `batch_committed` events and
// from polls of the job), the chart's geometry, and the formatting of the figures
// (unit-tested in stream.test.ts).
import type { Job, JobEvent, StreamProgress } from "../../api";
import { countOf, formatClock, formatCount, formatMillis, formatUtc } from "../../format";

/** How many micro-batches the live chart shows (the latest ones). */
export const SERIES_LENGTH = 60;

/** Whether a job runs as a stream: the job says so (`streaming`), or it has reported a
 * micro-batch (`progress.stream`). */
export function isStreaming(job: Pick<Job, "progress"> & { streaming?: boolean }): boolean {
  return job.streaming === true || !!job.progress.stream;
}

/** Whether a stream has committed a micro-batch (before the first, a worker may report its
 * figures with `batch_id` -1 and `batches` 0). */
export const hasBatch = (stream: StreamProgress | null | undefined): stream is StreamProgress =>
  !!stream && stream.batches > 0 && stream.batch_id >= 0;

/** What the UI shows for a job: a batch job as always; a stream (a SELECT's live tail or a
 * write's live figures) starting, live, or stopped with what it had reached. */
export type StreamState =
  | { phase: "batch" }
  | { phase: "starting"; select: boolean }
  | { phase: "live"; select: boolean; stream: StreamProgress }
  | { phase: "stopped"; select: boolean; status: Job["status"]; stream: StreamProgress | null };

export function streamState(job: Pick<Job, "status" | "kind" | "progress"> & { streaming?: boolean }): StreamState {
  if (!isStreaming(job)) return { phase: "batch" };
  const select = job.kind === "query";
  const stream = hasBatch(job.progress.stream) ? job.progress.stream : null;
  if (job.status === "CREATED" || job.status === "RUNNING")
    return stream ? { phase: "live", select, stream } : { phase: "starting", select };
  return { phase: "stopped", select, status: job.status, stream };
}

/** One micro-batch, as the chart draws it. */
export interface StreamPoint {
  batchId: number;
  inputRps: number;
  processedRps: number;
  durationMs: number;
}

const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

/** The latest batch's point, or null before the first batch. */
export function pointFromProgress(stream: StreamProgress): StreamPoint | null {
  if (!hasBatch(stream)) return null;
  return {
    batchId: stream.batch_id,
    inputRps: num(stream.input_rows_per_second) ?? 0,
    processedRps: num(stream.processed_rows_per_second) ?? 0,
    durationMs: num(stream.batch_duration_ms) ?? 0,
  };
}

/** The micro-batches of a job's `batch_committed` events (others, and malformed ones, skipped). */
export function pointsFromEvents(events: readonly JobEvent[]): StreamPoint[] {
  const points: StreamPoint[] = [];
  for (const event of events) {
    if (event.type !== "batch_committed") continue;
    const detail = event.detail;
    if (!detail || typeof detail !== "object") continue;
    const batchId = num(detail["batch_id"]);
    if (batchId === null || batchId < 0) continue;
    points.push({
      batchId,
      inputRps: num(detail["input_rows_per_second"]) ?? 0,
      processedRps: num(detail["processed_rows_per_second"]) ?? 0,
      durationMs: num(detail["batch_duration_ms"]) ?? 0,
    });
  }
  return points;
}

/** Two series as one: by batch id, each batch once (the later source wins), the latest `max`. */
export function mergeSeries(
  older: readonly StreamPoint[],
  newer: readonly StreamPoint[],
  max: number = SERIES_LENGTH,
): StreamPoint[] {
  const byBatch = new Map<number, StreamPoint>();
  for (const point of older) byBatch.set(point.batchId, point);
  for (const point of newer) byBatch.set(point.batchId, point);
  const merged = [...byBatch.values()].sort((a, b) => a.batchId - b.batchId);
  return max > 0 ? merged.slice(-max) : [];
}

const idle = (point: StreamPoint) => point.inputRps === 0 && point.processedRps === 0;

/** The series with the latest batch's point. A batch already in it keeps its point, except
 * that figures with rows replace idle ones (between batches the latest figures are of a
 * trigger that found no data, reported under the last batch's id). */
export function appendPoint(series: readonly StreamPoint[], point: StreamPoint | null, max: number = SERIES_LENGTH): StreamPoint[] {
  if (!point) return series as StreamPoint[];
  const known = series.find((p) => p.batchId === point.batchId);
  if (known && (idle(point) || !idle(known))) return series as StreamPoint[];
  return mergeSeries(series, [point], max);
}

/** A round top for an axis at or above `value`: 1, 2, 2.5 or 5 times a power of ten
 * (1 for a series that is all zero). */
export function niceMax(value: number): number {
  if (!Number.isFinite(value) || value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (value <= step * power * (1 + 1e-9)) return step * power;
  return 10 * power;
}

export interface ChartBox {
  width: number;
  height: number;
  /** Room kept free at the left (axis labels), in pixels. */
  left: number;
  top: number;
  bottom: number;
}

/** The polyline `points` attribute of each series over the box, all on one y axis from 0 to
 * `yMax` (a nice round number); x is the point's position in the series (one point: the
 * middle). */
export function chartLines(
  values: readonly (readonly number[])[],
  box: ChartBox,
): { yMax: number; lines: string[] } {
  const top = Math.max(0, ...values.flatMap((series) => series.filter(Number.isFinite)));
  const yMax = niceMax(top);
  const plotWidth = Math.max(0, box.width - box.left);
  const plotHeight = Math.max(0, box.height - box.top - box.bottom);
  const round = (v: number) => Math.round(v * 10) / 10;
  const lines = values.map((series) => {
    const n = series.length;
    return series
      .map((value, index) => {
        const x = box.left + (n === 1 ? plotWidth / 2 : (plotWidth * index) / (n - 1));
        const clamped = Number.isFinite(value) ? Math.min(Math.max(value, 0), yMax) : 0;
        const y = box.top + plotHeight - (plotHeight * clamped) / yMax;
        return `${round(x)},${round(y)}`;
      })
      .join(" ");
  });
  return { yMax, lines };
}

/** A rate as a short figure: "0", "8.5", "1,234", "12.3 k", "4.56 M" (rows per second). */
export function formatRate(value: number): string {
  if (!Number.isFinite(value) || value <= 0) return "0";
  if (value < 10) return String(Math.round(value * 10) / 10);
  if (value < 10_000) return formatCount(value);
  if (value < 1_000_000) return `${(value / 1000).toFixed(1)} k`;
  return `${(value / 1_000_000).toFixed(2)} M`;
}

/** A watermark as a UTC time ("2026-11-24 23:41:50 UTC", milliseconds when not zero); "none
 * yet" before the first. */
export function formatWatermark(value: string | null | undefined): string {
  if (!value) return "none yet";
  return formatUtc(value);
}

/** The batch duration as text ("850 ms", "1.2 s"). */
export const formatBatchDuration = (ms: number): string => formatMillis(ms);

/** The one-line summary of a stream's latest batch (the editor's stats line). */
export function streamLine(stream: StreamProgress, select: boolean): string {
  const parts = [
    `${formatRate(stream.input_rows_per_second)} rows/s in`,
    `${formatRate(stream.processed_rows_per_second)} rows/s processed`,
    `batch ${formatBatchDuration(stream.batch_duration_ms)}`,
    countOf(stream.batches, "batch", "batches"),
  ];
  if (!select) {
    parts.push(`${formatCount(stream.rows_committed)} rows committed`);
    if (stream.target_rows !== null && stream.target_rows !== undefined)
      parts.push(`${formatCount(stream.target_rows)} in the table`);
  }
  if (stream.watermark) parts.push(`watermark ${formatWatermark(stream.watermark)}`);
  return parts.join(" · ");
}

/** The rows of a live tail as shown: newest first (the server keeps them newest last). */
export function newestFirst<T>(rows: readonly T[]): T[] {
  return [...rows].reverse();
}

/** The line above a live tail: "Live — 1,000 rows, updated 23:59:01", or what the tail held
 * when the stream stopped. */
export function tailLine(live: boolean, rows: number, updatedAt: number | string | null): string {
  const count = countOf(rows, "row");
  const when = updatedAt === null ? "" : `, updated ${formatClock(updatedAt)}`;
  return live ? `Live — ${count}${when}` : `Stopped — the last ${count}${when}`;
}

/** A stream's timeline: every event but `batch_committed`, of which only the latest `keep`
 * (a long stream commits thousands); `hidden` is how many were left out. */
export function collapseBatches<T extends { type: string }>(events: readonly T[], keep: number): { events: T[]; hidden: number } {
  const batches = events.filter((event) => event.type === "batch_committed").length;
  let skip = Math.max(0, batches - Math.max(0, keep));
  const hidden = skip;
  const shown = events.filter((event) => {
    if (event.type !== "batch_committed" || skip === 0) return true;
    skip--;
    return false;
  });
  return { events: shown, hidden };
}
