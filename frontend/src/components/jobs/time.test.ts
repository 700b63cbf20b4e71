import { describe, expect, it } from "vitest";
import { formatMillis, formatOffset } from "../../format";
import { formatDuration, progressFraction } from "./time";

const base = { created_at: "2024-01-01T00:00:00Z", started_at: null, finished_at: null };

describe("formatMillis", () => {
  it("picks a unit", () => {
    expect(formatMillis(850)).toBe("850 ms");
    expect(formatMillis(12_340)).toBe("12.3 s");
    expect(formatMillis(245_000)).toBe("4 min 05 s");
    expect(formatMillis(3_720_000)).toBe("1 h 02 min");
    expect(formatMillis(-5)).toBe("0 ms");
  });
});

describe("formatDuration", () => {
  it("is a dash before the job starts", () => {
    expect(formatDuration({ ...base, status: "CREATED" })).toBe("—");
  });
  it("counts to now while running", () => {
    const now = Date.parse("2024-01-01T00:00:10Z");
    expect(
      formatDuration({ ...base, status: "RUNNING", started_at: "2024-01-01T00:00:05Z" }, now),
    ).toBe("5.0 s");
  });
  it("counts start to finish once ended", () => {
    expect(
      formatDuration({
        ...base,
        status: "FINISHED",
        started_at: "2024-01-01T00:00:01Z",
        finished_at: "2024-01-01T00:00:01.250Z",
      }),
    ).toBe("250 ms");
  });
  it("counts from creation for a job that never started", () => {
    expect(
      formatDuration({ ...base, status: "FAILED", finished_at: "2024-01-01T00:00:00.040Z" }),
    ).toBe("40 ms");
  });
});

describe("formatOffset", () => {
  it("is relative to the origin", () => {
    expect(formatOffset("2024-01-01T00:00:01.5Z", "2024-01-01T00:00:00Z")).toBe("+1.500 s");
    expect(formatOffset("2024-01-01T00:02:03.5Z", "2024-01-01T00:00:00Z")).toBe("+2 min 03.5 s");
  });
});

describe("progressFraction", () => {
  const p = { stages_total: 0, stages_done: 0, tasks_total: 0, tasks_done: 0, stages: null };
  it("is unknown with no tasks", () => {
    expect(progressFraction({ status: "RUNNING", progress: p })).toBeNull();
  });
  it("follows tasks", () => {
    expect(
      progressFraction({ status: "RUNNING", progress: { ...p, tasks_total: 4, tasks_done: 1 } }),
    ).toBe(0.25);
  });
  it("is full when finished", () => {
    expect(progressFraction({ status: "FINISHED", progress: p })).toBe(1);
  });
});
