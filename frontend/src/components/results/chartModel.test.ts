import { describe, expect, it } from "vitest";
import { chartQuery, defaultChart, fittingChart, formatTime, labelRoom, parseTime, pointsFor, timeTicks } from "./chartModel";

const columns = [
  { name: "day", data_type: "DATE" },
  { name: "region", data_type: "STRING" },
  { name: "amount", data_type: "DECIMAL(10,2)" },
  { name: "n", data_type: "BIGINT" },
];

describe("chart config", () => {
  it("defaults to a line over time, the rows themselves when few", () => {
    expect(defaultChart(columns, 100)).toEqual({ type: "line", x: "day", y: ["amount"], aggregation: "none" });
    expect(defaultChart(columns, 100_000).aggregation).toBe("avg");
    expect(defaultChart(columns.slice(1), 100_000)).toEqual({ type: "bar", x: "region", y: ["amount"], aggregation: "sum" });
  });
  it("a saved config applies only while its columns are there", () => {
    const saved = { type: "pie" as const, x: "region", y: ["n"], aggregation: "sum" as const };
    expect(fittingChart(saved, columns)).toBe(saved);
    expect(fittingChart({ ...saved, y: ["gone"] }, columns)).toBeNull();
    expect(fittingChart(null, columns)).toBeNull();
  });
  it("asks for a bounded number of points, filters included", () => {
    expect(pointsFor("pie", 800)).toBe(12);
    expect(pointsFor("bar", 600)).toBe(100);
    expect(pointsFor("line", 100_000)).toBe(1000);
    const q = new URLSearchParams(chartQuery({ type: "bar", x: "a b", y: ["n", "m"], aggregation: "sum" }, 50, ["s:contains:x&y"]).slice(1));
    expect(q.get("x")).toBe("a b");
    expect(q.getAll("y")).toEqual(["n", "m"]);
    expect(q.get("points")).toBe("50");
    expect(q.getAll("filter")).toEqual(["s:contains:x&y"]);
  });
});

describe("time axes", () => {
  it("reads the server's dates and times (no zone: UTC)", () => {
    expect(parseTime("2024-03-05")).toBe(Date.UTC(2024, 2, 5));
    expect(parseTime("2024-03-05T10:30:00")).toBe(Date.UTC(2024, 2, 5, 10, 30));
    expect(parseTime("2024-03-05T10:30:00+02:00")).toBe(Date.UTC(2024, 2, 5, 8, 30));
    expect(parseTime(null)).toBeNull();
    expect(parseTime("soon")).toBeNull();
  });
  it("ticks on whole hours, days, months and years", () => {
    const hours = timeTicks(Date.UTC(2024, 0, 1, 0, 10), Date.UTC(2024, 0, 1, 5, 50), 6);
    expect(hours.ticks).toEqual([1, 2, 3, 4, 5].map((h) => Date.UTC(2024, 0, 1, h)));
    const months = timeTicks(Date.UTC(2024, 0, 15), Date.UTC(2024, 11, 20), 6);
    expect(months.ticks).toEqual([2, 4, 6, 8, 10].map((m) => Date.UTC(2024, m, 1)));
    const years = timeTicks(Date.UTC(2001, 5, 1), Date.UTC(2024, 0, 1), 5);
    expect(years.ticks).toEqual([2005, 2010, 2015, 2020].map((y) => Date.UTC(y, 0, 1)));
  });
  it("labels say as much as the step needs", () => {
    const t = Date.UTC(2024, 2, 5, 14, 30, 15);
    expect(formatTime(t, 365 * 86_400_000)).toBe("2024");
    expect(formatTime(t, 31 * 86_400_000)).toBe("Mar 2024");
    expect(formatTime(t, 86_400_000)).toBe("Mar 5, 2024");
    expect(formatTime(t, 3_600_000)).toBe("Mar 5 14:30");
    expect(formatTime(t, 5_000)).toBe("14:30:15");
  });
  it("leaves room for long labels, more when rotated", () => {
    expect(labelRoom(["a", "abcdefghij"]).width).toBeCloseTo(64);
    expect(labelRoom(["abcdefghij"], 40).height).toBeGreaterThan(labelRoom(["abcdefghij"], 0).height);
  });
});
