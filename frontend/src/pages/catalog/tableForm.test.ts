import { describe, expect, it } from "vitest";
import {
  columnType,
  emptyColumn,
  emptyForm,
  errorTarget,
  moveRow,
  needsAnalyzer,
  targetKey,
  toTableRequest,
  type TableForm,
} from "./tableForm";

function form(): TableForm {
  const f = emptyForm();
  const id = { ...emptyColumn(), name: "id", dataType: "BIGINT", notNull: true };
  const price = { ...emptyColumn(), name: "price", dataType: "DECIMAL(10, 2)" };
  const total = { ...emptyColumn("computed"), name: "total", expression: "price * 2" };
  const file = { ...emptyColumn("metadata"), name: "file", metadataKey: "file_name", virtual: false };
  const ts = { ...emptyColumn(), name: "ts", dataType: "TIMESTAMP" };
  return {
    ...f,
    name: " t1 ",
    comment: "c",
    columns: [id, price, total, file, ts],
    watermarkColumn: "ts",
    watermarkExpression: "ts - INTERVAL 5 SECONDS",
    pkName: "pk_t",
    pkColumns: ["id"],
    partitionBy: ["price"],
  };
}

describe("toTableRequest", () => {
  it("builds the docs/api.md JSON", () => {
    const body = toTableRequest(form());
    expect(body.name).toBe("t1");
    expect(body.schema.columns).toEqual([
      { name: "id", kind: "physical", data_type: "BIGINT NOT NULL" },
      { name: "price", kind: "physical", data_type: "DECIMAL(10, 2)" },
      { name: "total", kind: "computed", expression: "price * 2" },
      { name: "file", kind: "metadata", data_type: "STRING", metadata_key: "file_name", virtual: false },
      { name: "ts", kind: "physical", data_type: "TIMESTAMP" },
    ]);
    expect(body.schema.watermarks).toEqual([{ column: "ts", expression: "ts - INTERVAL 5 SECONDS" }]);
    expect(body.schema.primary_key).toEqual({ name: "pk_t", columns: ["id"] });
    expect(body.options).toEqual({ format: "parquet" });
    expect(body.partition_by).toEqual(["price"]);
  });

  it("sends a column's comment trimmed, and none when none is typed", () => {
    const f = {
      ...form(),
      columns: [
        { ...emptyColumn(), name: "id", dataType: "BIGINT", comment: "  the order id " },
        { ...emptyColumn("computed"), name: "twice", expression: "id * 2", comment: "id doubled" },
        { ...emptyColumn(), name: "plain", dataType: "INT", comment: "   " },
      ],
      watermarkColumn: "",
      pkColumns: [],
      partitionBy: [],
    };
    expect(toTableRequest(f).schema.columns).toEqual([
      { name: "id", kind: "physical", data_type: "BIGINT", comment: "the order id" },
      { name: "twice", kind: "computed", expression: "id * 2", comment: "id doubled" },
      { name: "plain", kind: "physical", data_type: "INT" },
    ]);
  });

  it("leaves out an empty watermark and primary key; external options; extra options", () => {
    const f = {
      ...form(),
      watermarkExpression: "",
      pkColumns: [],
      storage: "external" as const,
      connector: "csv",
      path: "/data/x ",
      options: [
        { id: 1, key: "header", value: "true" },
        { id: 2, key: " ", value: "ignored" },
      ],
    };
    const body = toTableRequest(f);
    expect(body.schema.watermarks).toEqual([]);
    expect(body.schema.primary_key).toBeNull();
    expect(body.options).toEqual({ connector: "csv", path: "/data/x", header: "true" });
  });

  it("does not append NOT NULL twice", () => {
    expect(columnType({ ...emptyColumn(), dataType: "INT not null", notNull: true })).toBe("INT not null");
    expect(columnType({ ...emptyColumn(), dataType: "INT", notNull: false })).toBe("INT");
  });
});

describe("errorTarget", () => {
  const f = form();
  it("maps column fields to the row by position", () => {
    const target = errorTarget("schema.columns[2].expression", f);
    expect(target).toEqual({ area: "column", row: f.columns[2].id, field: "expression" });
    expect(targetKey(errorTarget("schema.columns[0].data_type", f))).toBe(
      `column:${f.columns[0].id}:data_type`,
    );
    expect(errorTarget("schema.columns[3]", f)).toEqual({ area: "column", row: f.columns[3].id, field: "row" });
    expect(errorTarget("schema.columns[99].name", f)).toEqual({ area: "columns" });
  });
  it("maps the other sections", () => {
    expect(errorTarget("name", f)).toEqual({ area: "name" });
    expect(errorTarget("schema.columns", f)).toEqual({ area: "columns" });
    expect(errorTarget("schema.watermarks[0].column", f)).toEqual({ area: "watermark", field: "column" });
    expect(errorTarget("schema.watermarks[0].expression", f)).toEqual({ area: "watermark", field: "expression" });
    expect(errorTarget("schema.primary_key.columns[1]", f)).toEqual({ area: "primary_key", field: "columns" });
    expect(errorTarget("options.path", f)).toEqual({ area: "options", key: "path" });
    expect(errorTarget("partition_by[0]", f)).toEqual({ area: "partition_by" });
    expect(errorTarget(undefined, f)).toEqual({ area: "general" });
    expect(errorTarget("something.else", f)).toEqual({ area: "general" });
  });
});

describe("moveRow", () => {
  it("swaps neighbours and ignores moves past the ends", () => {
    expect(moveRow([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(moveRow([1, 2, 3], 2, -1)).toEqual([1, 3, 2]);
    expect(moveRow([1, 2, 3], 0, -1)).toEqual([1, 2, 3]);
    expect(moveRow([1, 2, 3], 2, 1)).toEqual([1, 2, 3]);
  });
});

describe("needsAnalyzer", () => {
  it("is true with a computed column or a watermark, false otherwise", () => {
    const plain = { ...emptyForm(), columns: [{ ...emptyColumn(), name: "id", dataType: "BIGINT" }] };
    expect(needsAnalyzer(plain)).toBe(false);
    const blank = { ...plain, columns: [...plain.columns, { ...emptyColumn("computed"), name: "x", expression: "  " }] };
    expect(needsAnalyzer(blank)).toBe(false);
    const computed = { ...plain, columns: [...plain.columns, { ...emptyColumn("computed"), name: "x", expression: "id * 2" }] };
    expect(needsAnalyzer(computed)).toBe(true);
    expect(needsAnalyzer({ ...plain, watermarkColumn: "ts", watermarkExpression: "ts" })).toBe(true);
    expect(needsAnalyzer({ ...plain, watermarkColumn: "ts", watermarkExpression: "" })).toBe(false);
  });

  it("routes Spark's refusal of an expression to that column's expression field", () => {
    const f = form();
    const target = errorTarget("schema.columns[2].expression", f);
    expect(target).toEqual({ area: "column", row: f.columns[2].id, field: "expression" });
    expect(errorTarget("schema.watermarks[0].expression", f)).toEqual({ area: "watermark", field: "expression" });
  });
});
