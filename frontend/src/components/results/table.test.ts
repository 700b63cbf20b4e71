import { describe, expect, it } from "vitest";
import {
  togglePinned,
  withWidth,
  columnOrder,
  columnStats,
  csvField,
  downloadQuery,
  filterLabel,
  filterParam,
  filterRows,
  formatRows,
  markdownCell,
  passes,
  pinnedOffsets,
  resized,
  selectedBlock,
  sortParam,
  sortRows,
  viewerText,
} from "./table";

const columns = [
  { name: "id", data_type: "BIGINT" },
  { name: "s", data_type: "STRING" },
  { name: "price", data_type: "DECIMAL(10,2)" },
  { name: "tags", data_type: "ARRAY<STRING>" },
];
const rows: unknown[][] = [
  [3, "b", "10.50", ["x"]],
  [1, null, "2.00", null],
  [2, "a", "9.99", []],
  [10, "B", null, ["y"]],
];

describe("sortRows", () => {
  it("sorts numbers as numbers, decimals (strings) too, NULLs last both ways", () => {
    expect(sortRows(rows, { column: 0, dir: "asc" }, columns).map((r) => r[0])).toEqual([1, 2, 3, 10]);
    expect(sortRows(rows, { column: 0, dir: "desc" }, columns).map((r) => r[0])).toEqual([10, 3, 2, 1]);
    expect(sortRows(rows, { column: 2, dir: "asc" }, columns).map((r) => r[2])).toEqual(["2.00", "9.99", "10.50", null]);
    expect(sortRows(rows, { column: 1, dir: "asc" }, columns).map((r) => r[1])).toEqual(["B", "a", "b", null]);
    expect(sortRows(rows, { column: 1, dir: "desc" }, columns).map((r) => r[1])).toEqual(["b", "a", "B", null]);
  });
  it("is stable and leaves the input alone; no sort is the rows as they are", () => {
    const same = [
      [1, "x"],
      [1, "y"],
      [0, "z"],
    ];
    expect(sortRows(same, { column: 0, dir: "asc" }, columns).map((r) => r[1])).toEqual(["z", "x", "y"]);
    expect(same[0][1]).toBe("x");
    expect(sortRows(rows, null, columns)).toBe(rows);
  });
});

describe("filters", () => {
  it("contains is case-insensitive text; comparisons follow the type", () => {
    expect(filterRows(rows, [{ column: 1, op: "contains", value: "B" }], columns).map((r) => r[0])).toEqual([3, 10]);
    expect(filterRows(rows, [{ column: 2, op: "gt", value: "9.99" }], columns).map((r) => r[0])).toEqual([3]);
    expect(filterRows(rows, [{ column: 0, op: "le", value: "2" }], columns).map((r) => r[0])).toEqual([1, 2]);
    expect(filterRows(rows, [{ column: 1, op: "is_null", value: "" }], columns).map((r) => r[0])).toEqual([1]);
    expect(filterRows(rows, [{ column: 3, op: "not_null", value: "" }], columns)).toHaveLength(3);
  });
  it("all filters must hold; NULL passes no comparison", () => {
    const both = [
      { column: 0, op: "ge" as const, value: "2" },
      { column: 1, op: "ne" as const, value: "a" },
    ];
    expect(filterRows(rows, both, columns).map((r) => r[0])).toEqual([3, 10]);
    expect(passes(null, { column: 0, op: "ne", value: "1" }, "BIGINT")).toBe(false);
    expect(passes("x' OR '1'='1", { column: 1, op: "eq", value: "x' OR '1'='1" }, "STRING")).toBe(true);
    expect(passes(true, { column: 0, op: "eq", value: "true" }, "BOOLEAN")).toBe(true);
    expect(passes("2024-03-01", { column: 0, op: "lt", value: "2024-12-01" }, "DATE")).toBe(true);
  });
  it("become query parameters and labels", () => {
    expect(sortParam({ column: 1, dir: "desc" }, columns)).toBe("s:desc");
    expect(sortParam(null, columns)).toBeNull();
    expect(filterParam({ column: 0, op: "ge", value: "5" }, columns)).toBe("id:ge:5");
    expect(filterParam({ column: 1, op: "is_null", value: "ignored" }, columns)).toBe("s:is_null");
    expect(filterParam({ column: 1, op: "contains", value: "a:b" }, columns)).toBe("s:contains:a:b");
    expect(filterLabel({ column: 0, op: "ge", value: "5" }, columns)).toBe("id ≥ 5");
    expect(filterLabel({ column: 1, op: "not_null", value: "" }, columns)).toBe("s is not NULL");
  });
});

describe("columnStats", () => {
  it("counts NULLs and distinct values, min and max by type", () => {
    expect(columnStats(rows, 0, "BIGINT")).toEqual({ values: 4, nulls: 0, distinct: 4, min: "1", max: "10" });
    expect(columnStats(rows, 2, "DECIMAL(10,2)")).toEqual({ values: 4, nulls: 1, distinct: 3, min: "2.00", max: "10.50" });
    expect(columnStats(rows, 1, "STRING")).toMatchObject({ nulls: 1, distinct: 3, min: "B", max: "b" });
    expect(columnStats(rows, 3, "ARRAY<STRING>")).toEqual({ values: 4, nulls: 1, distinct: 3, min: null, max: null });
    expect(columnStats([], 0, "INT")).toEqual({ values: 0, nulls: 0, distinct: 0, min: null, max: null });
  });
});

describe("copy formats", () => {
  const cols = [{ name: "id" }, { name: "text" }];
  const data = [
    [1, 'say "hi", ok'],
    [2, null],
    [3, "a|b\nc"],
  ];
  it("CSV quotes commas, quotes and line breaks; NULL is empty", () => {
    expect(csvField('say "hi", ok')).toBe('"say ""hi"", ok"');
    expect(csvField(null)).toBe("");
    expect(formatRows(cols, data, "csv")).toBe('id,text\r\n1,"say ""hi"", ok"\r\n2,\r\n3,"a|b\nc"\r\n');
  });
  it("TSV as spreadsheets paste it", () => {
    expect(formatRows(cols, data, "tsv")).toBe('id\ttext\n1\tsay "hi", ok\n2\t\n3\t"a|b\nc"\n'.replace('say "hi", ok', '"say ""hi"", ok"'));
  });
  it("Markdown escapes pipes, keeps NULL visible, breaks lines with <br>", () => {
    expect(markdownCell("a|b\nc")).toBe("a\\|b<br>c");
    expect(formatRows(cols, data, "markdown")).toBe(
      '| id | text |\n| --- | --- |\n| 1 | say "hi", ok |\n| 2 | NULL |\n| 3 | a\\|b<br>c |\n',
    );
  });
});

describe("viewerText", () => {
  it("pretty-prints structures and JSON text, keeps other text as it is", () => {
    expect(viewerText({ a: [1, 2] })).toEqual({ text: '{\n  "a": [\n    1,\n    2\n  ]\n}', json: true });
    expect(viewerText('{"k":1}')).toEqual({ text: '{\n  "k": 1\n}', json: true });
    expect(viewerText("== Physical Plan ==\n*(1) Range")).toEqual({ text: "== Physical Plan ==\n*(1) Range", json: false });
    expect(viewerText("[not json")).toEqual({ text: "[not json", json: false });
    expect(viewerText(null)).toEqual({ text: "NULL", json: false });
  });
});

describe("pinned columns and selections", () => {
  it("pinned columns come first and stick after the row numbers", () => {
    expect(columnOrder(4, [2])).toEqual([2, 0, 1, 3]);
    expect(columnOrder(3, [2, 0, 7])).toEqual([2, 0, 1]);
    const offsets = pinnedOffsets([2, 0, 1], 2, [100, 50, 80], 64);
    expect([...offsets.entries()]).toEqual([
      [2, 64],
      [0, 144],
    ]);
  });
  it("a selection is the rectangle between two cells, in display order", () => {
    const block = selectedBlock(rows, columns, [1, 0, 2, 3], { row: 2, col: 1 }, { row: 1, col: 0 });
    expect(block.columns.map((c) => c.name)).toEqual(["s", "id"]);
    expect(block.rows).toEqual([
      [null, 1],
      ["a", 2],
    ]);
  });
  it("a drag resizes within bounds", () => {
    expect(resized(100, 30)).toBe(130);
    expect(resized(100, -90)).toBe(48);
    expect(resized(100, 5000)).toBe(1200);
  });
});

describe("pinning and column widths", () => {
  it("pins a column, and unpins it when pinned", () => {
    expect(togglePinned([], 2)).toEqual([2]);
    expect(togglePinned([2, 0], 2)).toEqual([0]);
  });
  it("sets a width and resets it to the default with null", () => {
    const widths = { 1: 120 };
    expect(withWidth(widths, 3, 80)).toEqual({ 1: 120, 3: 80 });
    expect(withWidth(widths, 1, null)).toEqual({});
    expect(widths).toEqual({ 1: 120 }); // not changed in place
  });
});

describe("downloadQuery", () => {
  it("carries the grid's sort, filters and the file's name", () => {
    expect(downloadQuery(null, [], "")).toBe("");
    expect(downloadQuery(null, [], "   ")).toBe("");
    expect(downloadQuery("id:desc", ["s:contains:a&b=c", "id:lt:5"], " Query 1 ")).toBe(
      "?sort=id%3Adesc&filter=s%3Acontains%3Aa%26b%3Dc&filter=id%3Alt%3A5&name=Query+1",
    );
  });
});
