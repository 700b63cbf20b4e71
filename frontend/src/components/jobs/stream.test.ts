import { describe, expect, it } from "vitest";

import type { Job, JobEvent, StreamProgress } from "../../api";
import { formatClock } from "../../format";
import {
  SERIES_LENGTH,
  appendPoint,
  collapseBatches,
  chartLines,
  formatRate,
  formatWatermark,
  isStreaming,
  mergeSeries,
  newestFirst,
  niceMax,
  pointFromProgress,
  pointsFromEvents,
  streamLine,
  streamState,
  tailLine,
  type StreamPoint,
} from "./stream";

const PROGRESS = { stages_total: 0, stages_done: 0, tasks_total: 0, tasks_done: 0, stages: null };

function stream(batch: number, extra: Partial<StreamProgress> = {}): StreamProgress {
  return {
    batch_id: batch,
    batches: batch + 1,
    input_rows_per_second: 100,
    processed_rows_per_second: 250.5,
    batch_duration_ms: 400,
    num_input_rows: 100,
    watermark: null,
    rows_committed: 100 * (batch + 1),
    target_rows: 100 * (batch + 1),
    updated_at: "2026-11-24T23:41:50Z",
    ...extra,
  };
}

type JobLike = Pick<Job, "status" | "kind" | "progress"> & { streaming?: boolean };
const job = (status: Job["status"], kind: string, extra: Partial<JobLike> = {}): JobLike => ({
  status,
  kind,
  progress: { ...PROGRESS },
  ...extra,
});

const point = (batchId: number, inputRps = 1, processedRps = 2, durationMs = 3): StreamPoint => ({
  batchId,
  inputRps,
  processedRps,
  durationMs,
});

describe("streamState", () => {
  it("leaves a batch job alone", () => {
    expect(isStreaming(job("RUNNING", "query"))).toBe(false);
    expect(streamState(job("RUNNING", "query"))).toEqual({ phase: "batch" });
    expect(streamState(job("FINISHED", "ctas"))).toEqual({ phase: "batch" });
  });

  it("knows a stream from the job's flag before any micro-batch", () => {
    expect(streamState(job("CREATED", "query", { streaming: true }))).toEqual({ phase: "starting", select: true });
    expect(streamState(job("RUNNING", "ctas", { streaming: true }))).toEqual({ phase: "starting", select: false });
  });

  it("knows a stream from its progress without the flag, and is live once a batch ran", () => {
    const s = stream(3);
    const running = job("RUNNING", "insert", { progress: { ...PROGRESS, stream: s } });
    expect(isStreaming(running)).toBe(true);
    expect(streamState(running)).toEqual({ phase: "live", select: false, stream: s });
  });

  it("is starting while the worker reports figures without a batch", () => {
    const none = stream(-1, { batches: 0 });
    expect(streamState(job("RUNNING", "ctas", { streaming: true, progress: { ...PROGRESS, stream: none } }))).toEqual({
      phase: "starting",
      select: false,
    });
    expect(streamState(job("CANCELED", "query", { streaming: true, progress: { ...PROGRESS, stream: none } }))).toEqual({
      phase: "stopped",
      select: true,
      status: "CANCELED",
      stream: null,
    });
  });

  it("is stopped once the job ended, keeping the last batch's figures", () => {
    const s = stream(7);
    expect(streamState(job("CANCELED", "query", { streaming: true, progress: { ...PROGRESS, stream: s } }))).toEqual({
      phase: "stopped",
      select: true,
      status: "CANCELED",
      stream: s,
    });
    expect(streamState(job("FAILED", "ctas", { streaming: true }))).toEqual({
      phase: "stopped",
      select: false,
      status: "FAILED",
      stream: null,
    });
  });

  it("does not take streaming: false or a missing stream for a stream", () => {
    expect(streamState(job("RUNNING", "query", { streaming: false, progress: { ...PROGRESS, stream: undefined } }))).toEqual({
      phase: "batch",
    });
  });
});

describe("series", () => {
  it("reads the batches of batch_committed events and skips the rest", () => {
    const events: JobEvent[] = [
      { at: "2026-11-24T00:00:00Z", type: "started", detail: null },
      {
        at: "2026-11-24T00:00:01Z",
        type: "batch_committed",
        detail: {
          batch_id: 0,
          rows: 10,
          input_rows_per_second: 12.5,
          processed_rows_per_second: 40,
          batch_duration_ms: 250,
          watermark: null,
        },
      },
      { at: "2026-11-24T00:00:02Z", type: "batch_committed", detail: "not an object" },
      { at: "2026-11-24T00:00:03Z", type: "batch_committed", detail: { batch_id: "1" } },
      { at: "2026-11-24T00:00:04Z", type: "batch_committed", detail: { batch_id: 2, input_rows_per_second: null } },
    ];
    expect(pointsFromEvents(events)).toEqual([point(0, 12.5, 40, 250), point(2, 0, 0, 0)]);
  });

  it("takes a point from the job's progress", () => {
    expect(pointFromProgress(stream(4))).toEqual(point(4, 100, 250.5, 400));
  });

  it("merges by batch id, in order, each batch once, the newer source winning", () => {
    const merged = mergeSeries([point(3), point(1), point(2, 5)], [point(2, 9), point(4)]);
    expect(merged.map((p) => p.batchId)).toEqual([1, 2, 3, 4]);
    expect(merged[1].inputRps).toBe(9);
  });

  it("keeps only the latest batches", () => {
    const many = Array.from({ length: SERIES_LENGTH + 15 }, (_, i) => point(i));
    const merged = mergeSeries(many, []);
    expect(merged).toHaveLength(SERIES_LENGTH);
    expect(merged[0].batchId).toBe(15);
    expect(mergeSeries(many, [], 0)).toEqual([]);
  });

  it("appends a new batch, and answers the same series for a batch it has", () => {
    const series = [point(0), point(1)];
    expect(appendPoint(series, point(1))).toBe(series);
    expect(appendPoint(series, point(1, 7))).toBe(series); // the batch's first figures stay
    expect(appendPoint(series, null)).toBe(series);
    expect(appendPoint(series, point(2)).map((p) => p.batchId)).toEqual([0, 1, 2]);
    expect(appendPoint([point(0), point(1), point(2)], point(3), 3).map((p) => p.batchId)).toEqual([1, 2, 3]);
  });

  it("never lets an idle trigger's zeros replace a batch's figures, but fills idle ones in", () => {
    const series = [point(0), point(1, 40, 90, 300)];
    expect(appendPoint(series, point(1, 0, 0, 12))).toBe(series);
    const idle = [point(0), point(1, 0, 0, 12)];
    expect(appendPoint(idle, point(1, 40, 90, 300))[1]).toEqual(point(1, 40, 90, 300));
  });

  it("has no point before the first batch", () => {
    expect(pointFromProgress(stream(-1, { batches: 0 }))).toBeNull();
    expect(pointsFromEvents([{ at: "", type: "batch_committed", detail: { batch_id: -1 } }])).toEqual([]);
  });
});

describe("chart geometry", () => {
  it("rounds the axis up to a nice number", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(-5)).toBe(1);
    expect(niceMax(Number.NaN)).toBe(1);
    expect(niceMax(1)).toBe(1);
    expect(niceMax(1.2)).toBe(2);
    expect(niceMax(2.2)).toBe(2.5);
    expect(niceMax(97)).toBe(100);
    expect(niceMax(101)).toBe(200);
    expect(niceMax(4200)).toBe(5000);
    expect(niceMax(0.03)).toBeCloseTo(0.05);
  });

  const box = { width: 110, height: 60, left: 10, top: 10, bottom: 0 };

  it("spreads the points over the width on one shared axis from 0", () => {
    const { yMax, lines } = chartLines([[0, 50, 100], [100, 100, 100]], box);
    expect(yMax).toBe(100);
    expect(lines[0]).toBe("10,60 60,35 110,10");
    expect(lines[1]).toBe("10,10 60,10 110,10");
  });

  it("puts a single point in the middle, and draws a flat zero series at the bottom", () => {
    expect(chartLines([[5]], box).lines[0]).toBe("60,10");
    const zero = chartLines([[0, 0]], box);
    expect(zero.yMax).toBe(1);
    expect(zero.lines[0]).toBe("10,60 110,60");
  });

  it("draws a value that is not a number at zero and never below it", () => {
    const { lines } = chartLines([[Number.NaN, -4, 10]], box);
    expect(lines[0]).toBe("10,60 60,60 110,10");
  });

  it("draws nothing for an empty series", () => {
    expect(chartLines([[]], box).lines).toEqual([""]);
  });
});

describe("formatting", () => {
  it("formats rates", () => {
    expect(formatRate(0)).toBe("0");
    expect(formatRate(-1)).toBe("0");
    expect(formatRate(Number.NaN)).toBe("0");
    expect(formatRate(8.46)).toBe("8.5");
    expect(formatRate(1234.4)).toBe("1,234");
    expect(formatRate(12_345)).toBe("12.3 k");
    expect(formatRate(4_560_000)).toBe("4.56 M");
  });

  it("formats watermarks in UTC, and their absence", () => {
    expect(formatWatermark(null)).toBe("none yet");
    expect(formatWatermark("2026-11-24T23:41:50Z")).toBe("2026-11-24 23:41:50 UTC");
    expect(formatWatermark("2026-11-24T23:41:50.250+00:00")).toBe("2026-11-24 23:41:50.250 UTC");
    expect(formatWatermark("soon")).toBe("soon");
  });

  it("formats a clock time with seconds", () => {
    const at = new Date(2026, 10, 24, 9, 5, 7).getTime();
    expect(formatClock(at)).toBe("09:05:07");
    expect(formatClock(null)).toBe("—");
    expect(formatClock("nonsense")).toBe("—");
  });

  it("sums up a write's batch in one line, a SELECT's without the table figures", () => {
    const s = stream(1, { watermark: "2026-11-24T23:41:45Z", target_rows: 1200 });
    expect(streamLine(s, false)).toBe(
      "100 rows/s in · 251 rows/s processed · batch 400 ms · 2 batches · 200 rows committed · 1,200 in the table · watermark 2026-11-24 23:41:45 UTC",
    );
    expect(streamLine(stream(0, { target_rows: null }), true)).toBe(
      "100 rows/s in · 251 rows/s processed · batch 400 ms · 1 batch",
    );
  });

  it("says how many rows the tail holds and when it was updated", () => {
    const at = new Date(2026, 10, 24, 23, 59, 1).getTime();
    expect(tailLine(true, 1000, at)).toBe("Live — 1,000 rows, updated 23:59:01");
    expect(tailLine(false, 1, at)).toBe("Stopped — the last 1 row, updated 23:59:01");
    expect(tailLine(true, 0, null)).toBe("Live — 0 rows");
  });

  it("shows the tail newest first without changing it", () => {
    const rows = [[1], [2], [3]];
    expect(newestFirst(rows)).toEqual([[3], [2], [1]]);
    expect(rows).toEqual([[1], [2], [3]]);
  });
});

describe("collapseBatches", () => {
  const events = [
    { type: "started" },
    { type: "batch_committed", n: 0 },
    { type: "batch_committed", n: 1 },
    { type: "batch_committed", n: 2 },
    { type: "cancel_requested" },
    { type: "batch_committed", n: 3 },
  ];

  it("keeps every other event and only the latest batches", () => {
    const { events: shown, hidden } = collapseBatches(events, 2);
    expect(hidden).toBe(2);
    expect(shown).toEqual([events[0], events[3], events[4], events[5]]);
  });

  it("keeps everything when there are few batches", () => {
    expect(collapseBatches(events, 10)).toEqual({ events, hidden: 0 });
  });

  it("keeps no batch for keep 0 (or less)", () => {
    expect(collapseBatches(events, -1).events.map((e) => e.type)).toEqual(["started", "cancel_requested"]);
  });
});
