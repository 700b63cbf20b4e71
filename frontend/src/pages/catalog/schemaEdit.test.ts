import { describe, expect, it } from "vitest";
import type { Schema } from "../../api";
import { alterStatements, createDdl, draftOf, newRow, schemaOf } from "./schemaEdit";

const ORDERS: Schema = {
  columns: [
    { name: "id", kind: "physical", data_type: "BIGINT", nullable: false },
    { name: "price", kind: "physical", data_type: "DECIMAL(10, 2)", nullable: true },
    { name: "ts", kind: "physical", data_type: "TIMESTAMP", nullable: true },
    { name: "total", kind: "computed", expression: "price * 2" },
  ],
  watermarks: [{ column: "ts", expression: "ts - INTERVAL 5 SECONDS" }],
  primary_key: { name: "pk_orders", columns: ["id"] },
};
const PATH = ["demo", "sales", "orders"];

describe("schema editing", () => {
  it("gives back the same schema and no statements when nothing changed", () => {
    const draft = draftOf(ORDERS);
    expect(schemaOf(draft)).toEqual(ORDERS);
    expect(alterStatements(PATH, ORDERS, draft)).toEqual([]);
  });

  it("renames a column without touching the key or watermark that use it", () => {
    const draft = draftOf(ORDERS);
    draft.rows[0].column.name = "order_id";
    draft.rows[2].column.name = "event_time";
    const schema = schemaOf(draft);
    expect(schema.primary_key).toEqual({ name: "pk_orders", columns: ["order_id"] });
    expect(schema.watermarks).toEqual([{ column: "event_time", expression: "ts - INTERVAL 5 SECONDS" }]);
    expect(alterStatements(PATH, ORDERS, draft)).toEqual([
      "ALTER TABLE demo.sales.orders RENAME id TO order_id",
      "ALTER TABLE demo.sales.orders RENAME ts TO event_time",
    ]);
  });

  it("adds, retypes, comments and drops columns, and changes the key and watermark", () => {
    const draft = draftOf(ORDERS);
    draft.rows[1].column.data_type = "DECIMAL(12, 2)";
    draft.rows[1].column.comment = "it's gross";
    const added = newRow();
    added.column.name = "qty";
    added.column.data_type = "INT";
    draft.rows = [...draft.rows.filter((r) => r.column.name !== "total"), added];
    draft.pkRows = [draft.rows[0].key, added.key];
    draft.watermark = { row: draft.rows[2].key, expression: "ts - INTERVAL 1 MINUTE" };
    expect(alterStatements(PATH, ORDERS, draft)).toEqual([
      "ALTER TABLE demo.sales.orders MODIFY price DECIMAL(12, 2) COMMENT 'it\\'s gross'",
      "ALTER TABLE demo.sales.orders ADD qty INT",
      "ALTER TABLE demo.sales.orders DROP total",
      "ALTER TABLE demo.sales.orders MODIFY WATERMARK FOR ts AS ts - INTERVAL 1 MINUTE",
      "ALTER TABLE demo.sales.orders MODIFY CONSTRAINT pk_orders PRIMARY KEY (id, qty) NOT ENFORCED",
    ]);
    draft.watermark = null;
    draft.pkRows = [];
    const statements = alterStatements(PATH, ORDERS, draft);
    expect(statements).toContain("ALTER TABLE demo.sales.orders DROP WATERMARK");
    expect(statements).toContain("ALTER TABLE demo.sales.orders DROP PRIMARY KEY");
    expect(schemaOf(draft).primary_key).toBeNull();
  });

  it("renders the resulting CREATE TABLE", () => {
    expect(createDdl(PATH, ORDERS)).toBe(
      "CREATE TABLE demo.sales.orders (\n" +
        "  id BIGINT NOT NULL,\n" +
        "  price DECIMAL(10, 2),\n" +
        "  ts TIMESTAMP,\n" +
        "  total AS price * 2,\n" +
        "  WATERMARK FOR ts AS ts - INTERVAL 5 SECONDS,\n" +
        "  CONSTRAINT pk_orders PRIMARY KEY (id) NOT ENFORCED\n" +
        ")",
    );
  });
});
