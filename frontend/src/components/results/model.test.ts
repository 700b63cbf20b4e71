import { describe, expect, it } from "vitest";
import {
  cellText,
  chartData,
  columnWidths,
  formatTick,
  isNumericType,
  labelIndices,
  niceTicks,
  pageRange,
  ROW_HEIGHT,
  scrollToShow,
  toNumber,
  toTsv,
  truncate,
  tsvField,
  visibleWindow,
} from "./model";

describe("cellText", () => {
  it("keeps NULL apart from the empty string", () => {
    expect(cellText(null)).toBeNull();
    expect(cellText("")).toBe("");
  });
  it("shows values as text", () => {
    expect(cellText(12)).toBe("12");
    expect(cellText(false)).toBe("false");
    expect(cellText({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(cellText("<img src=x onerror=alert(1)>")).toBe("<img src=x onerror=alert(1)>");
  });
});

describe("truncate", () => {
  it("cuts long values and multi-line values", () => {
    expect(truncate("abc", 5)).toEqual({ shown: "abc", cut: false });
    expect(truncate("abcdefgh", 5)).toEqual({ shown: "abcde…", cut: true });
    expect(truncate("ab\ncd", 5)).toEqual({ shown: "ab…", cut: true });
  });
});

describe("types", () => {
  it("knows the numeric ones", () => {
    for (const t of ["BIGINT", "int", "DOUBLE", "DECIMAL(10,2)", "float", "smallint"])
      expect(isNumericType(t)).toBe(true);
    for (const t of ["STRING", "DATE", "TIMESTAMP", "BOOLEAN", "ARRAY<INT>", "interval"])
      expect(isNumericType(t)).toBe(false);
  });
  it("reads numbers and decimal strings", () => {
    expect(toNumber(3)).toBe(3);
    expect(toNumber("12.50")).toBe(12.5);
    expect(toNumber("NaN")).toBeNull();
    expect(toNumber(null)).toBeNull();
    expect(toNumber("")).toBeNull();
  });
});

describe("visibleWindow", () => {
  it("renders only what shows, plus overscan", () => {
    expect(visibleWindow(0, 260, 100_000, 26, 8)).toEqual({ start: 0, end: 19 });
    expect(visibleWindow(26_000, 260, 100_000, 26, 8)).toEqual({ start: 992, end: 1019 });
    expect(visibleWindow(0, 260, 5, 26, 8)).toEqual({ start: 0, end: 5 });
    expect(visibleWindow(10_000, 260, 0, 26, 8)).toEqual({ start: 0, end: 0 });
  });
});

describe("pageRange", () => {
  it("is 1-based and inclusive", () => {
    expect(pageRange(0, 1000)).toEqual({ first: 1, last: 1000 });
    expect(pageRange(1, 1000)).toEqual({ first: 1001, last: 2000 });
    expect(pageRange(99, 1000)).toEqual({ first: 99_001, last: 100_000 });
    expect(pageRange(0, 0)).toEqual({ first: 0, last: 0 });
  });
});

describe("columnWidths", () => {
  it("grows with content and stays within bounds", () => {
    const widths = columnWidths(
      [
        { name: "id", data_type: "INT" },
        { name: "s", data_type: "STRING" },
      ],
      [
        [1, "x".repeat(1000)],
        [2, null],
      ],
    );
    expect(widths[0]).toBeGreaterThanOrEqual(64);
    expect(widths[1]).toBe(360);
  });
});

describe("ticks", () => {
  it("are round and cover the range", () => {
    expect(niceTicks(0, 100, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(3, 97, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(-1, 1, 4)).toEqual([-1, -0.5, 0, 0.5, 1]);
    const flat = niceTicks(5, 5, 5);
    expect(flat[0]).toBeLessThanOrEqual(5);
    expect(flat[flat.length - 1]).toBeGreaterThanOrEqual(5);
  });
  it("format compactly", () => {
    expect(formatTick(0)).toBe("0");
    expect(formatTick(2.5)).toBe("2.5");
    expect(formatTick(25_000)).toBe("25k");
    expect(formatTick(3_000_000)).toBe("3M");
  });
  it("spread labels", () => {
    expect(labelIndices(3, 10)).toEqual([0, 1, 2]);
    expect(labelIndices(100, 10)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });
});

describe("chartData", () => {
  it("builds one series per Y column", () => {
    const data = chartData(
      [
        ["a", 1, "2.5"],
        ["b", null, "3"],
      ],
      0,
      [1, 2],
      [{ name: "k" }, { name: "n" }, { name: "d" }],
    );
    expect(data.x).toEqual(["a", "b"]);
    expect(data.series).toEqual([
      { name: "n", values: [1, null] },
      { name: "d", values: [2.5, 3] },
    ]);
  });
});

describe("tab-separated copy", () => {
  it("NULL is empty; tabs, line breaks and quotes are quoted", () => {
    expect(tsvField(null)).toBe("");
    expect(tsvField("")).toBe("");
    expect(tsvField(12.5)).toBe("12.5");
    expect(tsvField("a\tb")).toBe('"a\tb"');
    expect(tsvField("line 1\nline 2")).toBe('"line 1\nline 2"');
    expect(tsvField('say "hi"')).toBe('"say ""hi"""');
    expect(tsvField({ k: [1, 2] })).toBe('"{""k"":[1,2]}"');
  });
  it("a header line, then one line per row", () => {
    const columns = [{ name: "id" }, { name: "s" }];
    expect(toTsv(columns, [[0, null], [1, "x"]])).toBe("id\ts\n0\t\n1\tx\n");
  });
});

describe("scrollToShow", () => {
  const header = 40;
  const viewport = header + 10 * ROW_HEIGHT; // ten rows in view under the header
  it("keeps the position while the row is in view", () => {
    expect(scrollToShow(0, 0, viewport, header)).toBe(0);
    expect(scrollToShow(9, 0, viewport, header)).toBe(0);
  });
  it("scrolls down just enough, or up to the row", () => {
    expect(scrollToShow(10, 0, viewport, header)).toBe(ROW_HEIGHT);
    expect(scrollToShow(3, 5 * ROW_HEIGHT, viewport, header)).toBe(3 * ROW_HEIGHT);
  });
});
