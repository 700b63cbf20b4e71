import { describe, expect, it } from "vitest";
import type { Schema } from "../../api";
import { baseType, deltaStatements, isManagedDelta, isNotNull, quoted, tableCommentStatement } from "./deltaAlter";
import { draftOf, newRow, type SchemaDraft } from "./schemaEdit";

const PEOPLE: Schema = {
  columns: [
    { name: "id", kind: "physical", data_type: "BIGINT NOT NULL" },
    { name: "name", kind: "physical", data_type: "STRING", comment: "as written" },
    { name: "score", kind: "physical", data_type: "DECIMAL(10, 2)", nullable: false },
  ],
  watermarks: [],
  primary_key: null,
};
const PATH = ["demo", "sales", "people"];
const T = "ALTER TABLE `demo`.`sales`.`people`";

function edited(schema: Schema, change: (draft: SchemaDraft) => void): SchemaDraft {
  const draft = draftOf(schema);
  change(draft);
  return draft;
}

const added = (name: string, dataType: string, comment?: string) => {
  const row = newRow();
  row.column = { ...row.column, name, data_type: dataType, ...(comment ? { comment } : {}) };
  return row;
};

describe("Delta ALTER TABLE statements", () => {
  it("knows a managed Delta table", () => {
    expect(isManagedDelta({ managed: true, options: { format: "delta" } })).toBe(true);
    expect(isManagedDelta({ managed: true, options: { FORMAT: " Delta " } })).toBe(true);
    expect(isManagedDelta({ managed: true, options: {} })).toBe(false);
    expect(isManagedDelta({ managed: true, options: { format: "parquet" } })).toBe(false);
    expect(isManagedDelta({ managed: false, options: { format: "delta", path: "/data/x" } })).toBe(false);
    expect(isManagedDelta({ managed: true, options: { connector: "delta" } })).toBe(false);
  });

  it("gives nothing when nothing changed", () => {
    expect(deltaStatements(PATH, PEOPLE, draftOf(PEOPLE))).toEqual({ statements: [], refusals: [] });
  });

  it("renames a column", () => {
    const draft = edited(PEOPLE, (d) => (d.rows[1].column.name = "full_name"));
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([`${T} RENAME COLUMN \`name\` TO \`full_name\``]);
  });

  it("adds columns in one statement, with their comments", () => {
    const draft = edited(PEOPLE, (d) => d.rows.push(added("age", "SMALLINT", "in years"), added("tag", "string")));
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([
      `${T} ADD COLUMNS (\`age\` SMALLINT COMMENT 'in years', \`tag\` string)`,
    ]);
  });

  it("drops columns in one statement", () => {
    const draft = edited(PEOPLE, (d) => (d.rows = d.rows.filter((r) => r.column.name === "id")));
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([`${T} DROP COLUMNS (\`name\`, \`score\`)`]);
  });

  it("sets, changes and removes a column comment", () => {
    let draft = edited(PEOPLE, (d) => (d.rows[0].column.comment = "the key"));
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([`${T} ALTER COLUMN \`id\` COMMENT 'the key'`]);
    draft = edited(PEOPLE, (d) => (d.rows[1].column.comment = ""));
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([`${T} ALTER COLUMN \`name\` COMMENT ''`]);
  });

  it("escapes quotes and backslashes in comments", () => {
    const draft = edited(PEOPLE, (d) => {
      d.rows[1].column.comment = "it's a \\ path";
      d.rows.push(added("note", "STRING", "O'Brien's"));
    });
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([
      `${T} ADD COLUMNS (\`note\` STRING COMMENT 'O\\'Brien\\'s')`,
      `${T} ALTER COLUMN \`name\` COMMENT 'it\\'s a \\\\ path'`,
    ]);
    expect(tableCommentStatement(PATH, "Bob's table")).toBe("COMMENT ON TABLE `demo`.`sales`.`people` IS 'Bob\\'s table'");
    expect(tableCommentStatement(PATH, "  ")).toBe("COMMENT ON TABLE `demo`.`sales`.`people` IS NULL");
  });

  it("quotes every name with backticks, doubling backticks inside", () => {
    expect(quoted("a`b")).toBe("`a``b`");
    const draft = edited(PEOPLE, (d) => {
      d.rows[1].column.name = "select";
      d.rows[2].column.name = "odd `name` here";
    });
    expect(deltaStatements(["my cat", "db", "t"], PEOPLE, draft).statements).toEqual([
      "ALTER TABLE `my cat`.`db`.`t` RENAME COLUMN `name` TO `select`",
      "ALTER TABLE `my cat`.`db`.`t` RENAME COLUMN `score` TO `odd ``name`` here`",
    ]);
  });

  it("sets and drops NOT NULL, wherever the catalog keeps it", () => {
    expect(isNotNull(PEOPLE.columns[0])).toBe(true);
    expect(isNotNull(PEOPLE.columns[2])).toBe(true);
    expect(baseType("decimal(10,2) not null")).toBe(baseType("DECIMAL(10, 2)"));
    const draft = edited(PEOPLE, (d) => {
      d.rows[0].column.data_type = "BIGINT";
      d.rows[1].column.nullable = false;
      d.rows[2].column.nullable = true;
    });
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([
      `${T} ALTER COLUMN \`id\` DROP NOT NULL`,
      `${T} ALTER COLUMN \`name\` SET NOT NULL`,
      `${T} ALTER COLUMN \`score\` DROP NOT NULL`,
    ]);
  });

  it("orders drops, renames, additions and column changes so each name is free when taken", () => {
    const draft = edited(PEOPLE, (d) => {
      // name → full_name, then score → name: the second waits for the first.
      d.rows[2].column.name = "name";
      d.rows[1].column.name = "full_name";
      d.rows[1].column.comment = "renamed";
      d.rows = d.rows.filter((r) => r.column.name !== "id");
      d.rows.push(added("id", "STRING"));
    });
    expect(deltaStatements(PATH, PEOPLE, draft).statements).toEqual([
      `${T} DROP COLUMNS (\`id\`)`,
      `${T} RENAME COLUMN \`name\` TO \`full_name\``,
      `${T} RENAME COLUMN \`score\` TO \`name\``,
      `${T} ADD COLUMNS (\`id\` STRING)`,
      `${T} ALTER COLUMN \`full_name\` COMMENT 'renamed'`,
    ]);
  });

  it("refuses a swap of names", () => {
    const draft = edited(PEOPLE, (d) => {
      d.rows[1].column.name = "score";
      d.rows[2].column.name = "name";
    });
    const { statements, refusals } = deltaStatements(PATH, PEOPLE, draft);
    expect(statements).toEqual([]);
    expect(refusals[0]).toMatch(/swap names/);
  });

  it("refuses what Delta's ALTER TABLE cannot express, with a sentence each", () => {
    const flink: Schema = {
      columns: [
        { name: "id", kind: "physical", data_type: "BIGINT", nullable: false },
        { name: "price", kind: "physical", data_type: "DECIMAL(10, 2)" },
        { name: "ts", kind: "physical", data_type: "TIMESTAMP" },
        { name: "total", kind: "computed", expression: "price * 2" },
      ],
      watermarks: [{ column: "ts", expression: "ts - INTERVAL 5 SECONDS" }],
      primary_key: { name: "pk", columns: ["id"] },
    };
    const refused = (change: (d: SchemaDraft) => void) => deltaStatements(PATH, flink, edited(flink, change));

    const answer = refused((d) => (d.rows[1].column.data_type = "DECIMAL(12, 2)"));
    expect(answer.statements).toEqual([]);
    expect(answer.refusals).toEqual([
      "`price` keeps its type DECIMAL(10, 2): Delta's ALTER TABLE does not change a column's type (add a new column and fill it with UPDATE instead).",
    ]);
    expect(refused((d) => (d.pkRows = [])).refusals[0]).toMatch(/primary key cannot be changed/);
    expect(refused((d) => (d.pkName = "other")).refusals[0]).toMatch(/primary key cannot be changed/);
    expect(refused((d) => (d.watermark = null)).refusals[0]).toMatch(/watermark cannot be changed/);
    expect(refused((d) => (d.rows[3].column.expression = "price * 3")).refusals[0]).toMatch(/computed column/);
    expect(refused((d) => (d.rows = d.rows.slice(0, 3))).refusals[0]).toMatch(/`total` is a computed column/);
    // A rename the watermark or a computed column would not follow.
    expect(refused((d) => (d.rows[2].column.name = "event_time")).refusals[0]).toMatch(/watermark's column/);
    expect(refused((d) => (d.rows[1].column.name = "amount")).refusals[0]).toMatch(/`total` reads `price`/);
    // A key column renamed: the key follows (the catalog renames it too).
    expect(refused((d) => (d.rows[0].column.name = "order_id")).statements).toEqual([
      `${T} RENAME COLUMN \`id\` TO \`order_id\``,
    ]);
    const computed = newRow();
    computed.column = { name: "twice", kind: "computed", expression: "id * 2" };
    expect(refused((d) => d.rows.push(computed)).refusals[0]).toMatch(/only physical columns/);
    const strict = added("must", "INT");
    strict.column.nullable = false;
    expect(refused((d) => d.rows.push(strict)).refusals[0]).toMatch(/cannot be NOT NULL/);
    expect(refused((d) => d.rows.push(added("", "INT"))).refusals).toContain("Every column needs a name.");
    expect(refused((d) => d.rows.push(added("x", ""))).refusals).toEqual(["The new column `x` needs a type."]);
    expect(refused((d) => d.rows.push(added("ID", "INT"))).refusals).toEqual(["Two columns are named `ID`."]);
  });
});
