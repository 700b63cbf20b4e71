import { describe, expect, it } from "vitest";
import {
  appendSql,
  columnsProblem,
  createSql,
  createTemporarySql,
  mediaTypeOf,
  previewSql,
  quoted,
  tableNameOf,
  temporaryTableOf,
} from "./uploadSql";

const id = "6f1c2d3e-0000-4000-8000-000000000001";
const columns = [
  { source: "id", name: "id", type: "INT" },
  { source: "we`ird", name: "select", type: "DECIMAL(10, 2)" },
];

describe("upload statements", () => {
  it("backticks every name, doubling backticks", () => {
    expect(quoted("a`b")).toBe("`a``b`");
    expect(quoted("order")).toBe("`order`");
  });

  it("reads the upload through a temporary table of its own", () => {
    expect(temporaryTableOf(id)).toBe("__upload_6f1c2d3e0000");
    expect(createTemporarySql(id)).toBe(
      "CREATE TEMPORARY TABLE `__upload_6f1c2d3e0000` WITH ('connector' = 'upload', 'upload' = '6f1c2d3e-0000-4000-8000-000000000001')",
    );
  });

  it("casts each column to its chosen type under its chosen name", () => {
    expect(previewSql(id, columns)).toBe(
      "SELECT CAST(`id` AS INT) AS `id`, CAST(`we``ird` AS DECIMAL(10, 2)) AS `select` FROM `__upload_6f1c2d3e0000` LIMIT 20",
    );
    expect(createSql(["demo", "sales", "new t"], id, columns)).toMatch(/^CREATE TABLE `demo`.`sales`.`new t` AS SELECT CAST/);
    expect(appendSql(["demo", "sales", "t"], id, columns)).toMatch(/^INSERT INTO `demo`.`sales`.`t` BY NAME SELECT CAST/);
  });

  it("refuses empty and repeated names before running", () => {
    expect(columnsProblem(columns)).toBeNull();
    expect(columnsProblem([{ source: "a", name: " ", type: "INT" }])).toMatch(/needs a name/);
    expect(columnsProblem([{ source: "a", name: "A", type: "INT" }, { source: "b", name: "a", type: "INT" }])).toMatch(
      /Two columns are named a/,
    );
  });

  it("sends Parquet files as Parquet and anything else as CSV", () => {
    expect(mediaTypeOf({ name: "x.PARQUET", type: "" })).toBe("application/vnd.apache.parquet");
    expect(mediaTypeOf({ name: "x.csv", type: "text/csv" })).toBe("text/csv");
  });

  it("names the new table after the file", () => {
    expect(tableNameOf("Sales 2024.csv")).toBe("sales_2024");
    expect(tableNameOf("...csv")).toBe("uploaded");
  });
});
