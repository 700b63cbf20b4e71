import { describe, expect, it } from "vitest";
import type { JobStage } from "../../api";
import { formatStageDuration, stageLabel, stagePurpose, stageTotals, stagesSummary } from "./stages";

function stage(overrides: Partial<JobStage>): JobStage {
  return {
    stage_id: 0,
    attempt: 0,
    name: "toArrow at <unknown>:0",
    status: "COMPLETE",
    tasks: 2,
    tasks_completed: 2,
    tasks_failed: 0,
    rows_read: 0,
    bytes_read: 0,
    rows_written: 0,
    bytes_written: 0,
    shuffle_read_rows: 0,
    shuffle_read_bytes: 0,
    shuffle_write_rows: 0,
    shuffle_write_bytes: 0,
    memory_spilled: 0,
    disk_spilled: 0,
    duration_ms: 120,
    run_time_ms: 200,
    failure: null,
    ...overrides,
  };
}

describe("stage metrics formatting", () => {
  it("formats durations as the rest of the UI does (format.ts)", () => {
    expect(formatStageDuration(null)).toBe("—");
    expect(formatStageDuration(85)).toBe("85 ms");
    expect(formatStageDuration(2449)).toBe("2.4 s");
    expect(formatStageDuration(185_000)).toBe("3 min 05 s");
  });

  it("labels retried stages with their attempt", () => {
    expect(stageLabel({ stage_id: 4, attempt: 0 })).toBe("4");
    expect(stageLabel({ stage_id: 4, attempt: 1 })).toBe("4 (attempt 1)");
  });

  it("sums the stages and summarises them", () => {
    const stages = [
      stage({ stage_id: 0, rows_read: 600, bytes_read: 4096, shuffle_write_bytes: 2048 }),
      stage({ stage_id: 1, shuffle_read_bytes: 2048, bytes_written: 3 * 1024 * 1024, disk_spilled: 512, memory_spilled: 1536 }),
    ];
    expect(stageTotals(stages)).toEqual({
      stages: 2,
      tasks: 4,
      rowsRead: 600,
      bytesRead: 4096,
      rowsWritten: 0,
      bytesWritten: 3 * 1024 * 1024,
      shuffleRead: 2048,
      shuffleWrite: 2048,
      spilled: 2048,
    });
    expect(stagesSummary(stages)).toBe("2 stages · 600 rows read · 3 MiB written · 2 KiB spilled");
    expect(stagesSummary([stage({})])).toBe("1 stage");
  });
});

describe("stagePurpose", () => {
  it("tells Spark's internal names by what they do", () => {
    expect(stagePurpose(stage({ name: "$anonfun$withThreadLocalCaptured$1" }))).toMatch(/broadcast table or a subquery/);
    expect(stagePurpose(stage({ name: "toArrow" }))).toBe("Returns the result's rows");
    expect(stagePurpose(stage({ name: "collectToPython" }))).toBe("Returns the result's rows");
    expect(stagePurpose(stage({ name: "save" }))).toBe("Writes the table's files");
  });

  it("tells a shuffle stage by its shuffle write, whatever its name", () => {
    const scan = stage({ name: "toArrow", bytes_read: 1000, shuffle_write_bytes: 10 });
    expect(stagePurpose(scan)).toBe("Reads input and shuffles it for a join, aggregation or sort");
    const middle = stage({ name: "toArrow", shuffle_read_bytes: 10, shuffle_write_bytes: 5 });
    expect(stagePurpose(middle)).toMatch(/^Reads the last stage's output and shuffles/);
  });

  it("falls back on what an unknown stage read and wrote", () => {
    expect(stagePurpose(stage({ name: "mystery", shuffle_read_rows: 3 }))).toBe("Combines the shuffled rows");
    expect(stagePurpose(stage({ name: "mystery", rows_written: 3 }))).toBe("Writes the table's files");
    expect(stagePurpose(stage({ name: "mystery", rows_read: 3 }))).toBe("Reads input");
    expect(stagePurpose(stage({ name: "" }))).toBe("Computes rows");
  });
});
