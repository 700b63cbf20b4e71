import { describe, expect, it } from "vitest";
import { analyzeStatement, isStale, lengths } from "./StatisticsPanel";

describe("column statistics", () => {
  const figures = {
    name: "n",
    data_type: "STRING",
    null_count: 3,
    distinct_count: 10,
    min: null,
    max: null,
    avg: null,
    avg_length: 7.125,
    max_length: 1200,
  };

  it("shows average and maximum length for strings, a dash for the others", () => {
    expect(lengths(figures)).toBe("7.13 / 1,200");
    expect(lengths({ ...figures, avg_length: null, max_length: null })).toBe("—");
  });

  it("analyzes every column of the quoted path", () => {
    expect(analyzeStatement("`c`.`d`.`my t`")).toBe("ANALYZE TABLE `c`.`d`.`my t` COMPUTE STATISTICS FOR ALL COLUMNS");
  });
});

describe("isStale", () => {
  it("is true only when a commit came after the computation", () => {
    expect(isStale("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")).toBe(true);
    expect(isStale("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z")).toBe(false);
    expect(isStale("2026-01-02T00:00:00Z", null)).toBe(false);
    expect(isStale(null, "2026-01-01T00:00:00Z")).toBe(false);
  });
});
