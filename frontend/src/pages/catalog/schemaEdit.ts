// Schema editing on the table page (pure, unit-tested): rows that remember the column they
// came from (so a rename is a rename), the declared schema they give back for PATCH, the
// changes as ALTER TABLE statements (Flink's syntax) and the resulting CREATE TABLE.
import { sqlPath, type Column, type Schema } from "../../api";
import { sqlString } from "./ddl";

export interface EditRow {
  key: number;
  /** The name the column had when editing started; null for a new column. */
  origin: string | null;
  column: Column;
}

/** The key and watermark point at rows (by `key`), so they follow a rename. */
export interface SchemaDraft {
  rows: EditRow[];
  watermark: { row: number; expression: string } | null;
  pkName: string;
  pkRows: number[];
}

let nextKey = 1;

export function draftOf(schema: Schema): SchemaDraft {
  const rows = schema.columns.map((column) => ({ key: nextKey++, origin: column.name, column: { ...column } }));
  const keyOf = (name: string) => rows.find((r) => r.column.name.toLowerCase() === name.toLowerCase())?.key;
  const watermark = schema.watermarks[0] ?? null;
  const wmRow = watermark ? keyOf(watermark.column) : undefined;
  return {
    rows,
    watermark: watermark && wmRow !== undefined ? { row: wmRow, expression: watermark.expression } : null,
    pkName: schema.primary_key?.name ?? "",
    pkRows: (schema.primary_key?.columns ?? []).map(keyOf).filter((k): k is number => k !== undefined),
  };
}

export function newRow(): EditRow {
  return { key: nextKey++, origin: null, column: { name: "", kind: "physical", data_type: "", nullable: true } };
}

function cleanColumn(column: Column): Column {
  const out: Column = { name: column.name.trim(), kind: column.kind };
  if (column.kind === "computed") out.expression = (column.expression ?? "").trim();
  else out.data_type = (column.data_type ?? "").trim();
  if (column.kind === "physical") out.nullable = column.nullable !== false;
  if (column.kind === "metadata") {
    if (column.metadata_key) out.metadata_key = column.metadata_key;
    if (column.virtual) out.virtual = true;
  }
  if (column.comment) out.comment = column.comment;
  return out;
}

/** The declared schema the draft stands for (what PATCH sends). */
export function schemaOf(draft: SchemaDraft): Schema {
  const nameOf = (key: number) => draft.rows.find((r) => r.key === key)?.column.name.trim();
  const pk = draft.pkRows.map(nameOf).filter((n): n is string => Boolean(n));
  const wmColumn = draft.watermark ? nameOf(draft.watermark.row) : undefined;
  const watermark =
    draft.watermark && wmColumn ? [{ column: wmColumn, expression: draft.watermark.expression.trim() }] : [];
  return {
    columns: draft.rows.map((row) => cleanColumn(row.column)),
    watermarks: watermark,
    primary_key: pk.length ? { name: draft.pkName.trim() || null, columns: pk } : null,
  };
}

function columnDdl(column: Column): string {
  const name = sqlPath([column.name]);
  const comment = column.comment ? ` COMMENT ${sqlString(column.comment)}` : "";
  if (column.kind === "computed") return `${name} AS ${column.expression ?? ""}${comment}`;
  if (column.kind === "metadata") {
    const from = column.metadata_key && column.metadata_key !== column.name ? ` FROM ${sqlString(column.metadata_key)}` : "";
    return `${name} ${column.data_type ?? ""} METADATA${from}${column.virtual ? " VIRTUAL" : ""}${comment}`;
  }
  return `${name} ${column.data_type ?? ""}${column.nullable === false ? " NOT NULL" : ""}${comment}`;
}

/** The table as CREATE TABLE would declare it (columns, watermark, key). */
export function createDdl(path: string[], schema: Schema): string {
  const lines = schema.columns.map(columnDdl);
  for (const w of schema.watermarks) lines.push(`WATERMARK FOR ${sqlPath([w.column])} AS ${w.expression}`);
  if (schema.primary_key) {
    const name = schema.primary_key.name ? `CONSTRAINT ${sqlPath([schema.primary_key.name])} ` : "";
    lines.push(`${name}PRIMARY KEY (${schema.primary_key.columns.map((c) => sqlPath([c])).join(", ")}) NOT ENFORCED`);
  }
  return `CREATE TABLE ${sqlPath(path)} (\n  ${lines.join(",\n  ")}\n)`;
}

/** The changes from `before` to `draft` as ALTER TABLE statements (a preview: the page applies
 * them as one PATCH of the schema). */
export function alterStatements(path: string[], before: Schema, draft: SchemaDraft): string[] {
  const table = `ALTER TABLE ${sqlPath(path)}`;
  const after = schemaOf(draft);
  const out: string[] = [];
  const kept = new Set<string>();
  draft.rows.forEach((row, index) => {
    const now = after.columns[index];
    if (row.origin === null) {
      out.push(`${table} ADD ${columnDdl(now)}`);
      return;
    }
    const old = before.columns.find((c) => c.name.toLowerCase() === row.origin!.toLowerCase());
    if (!old) return;
    kept.add(old.name.toLowerCase());
    if (old.name !== now.name) out.push(`${table} RENAME ${sqlPath([old.name])} TO ${sqlPath([now.name])}`);
    const oldClean = cleanColumn(old);
    const same =
      oldClean.kind === now.kind &&
      (oldClean.data_type ?? "") === (now.data_type ?? "") &&
      (oldClean.expression ?? "") === (now.expression ?? "") &&
      (oldClean.nullable ?? true) === (now.nullable ?? true) &&
      (oldClean.comment ?? "") === (now.comment ?? "");
    if (!same) out.push(`${table} MODIFY ${columnDdl(now)}`);
  });
  for (const old of before.columns)
    if (!kept.has(old.name.toLowerCase())) out.push(`${table} DROP ${sqlPath([old.name])}`);
  // The key and watermark as they were, with the renames made since (a rename alone is no
  // change of them).
  const renamed = (name: string) =>
    after.columns[draft.rows.findIndex((r) => r.origin?.toLowerCase() === name.toLowerCase())]?.name ?? "";
  const wmBefore = before.watermarks[0] ?? null;
  const wmAfter = after.watermarks[0] ?? null;
  const followed = wmBefore ? { column: renamed(wmBefore.column), expression: wmBefore.expression } : null;
  if (JSON.stringify(followed) !== JSON.stringify(wmAfter)) {
    if (wmAfter) out.push(`${table} ${wmBefore ? "MODIFY" : "ADD"} WATERMARK FOR ${sqlPath([wmAfter.column])} AS ${wmAfter.expression}`);
    else out.push(`${table} DROP WATERMARK`);
  }
  const pkBefore = before.primary_key;
  const pkAfter = after.primary_key;
  const pkFollowed = pkBefore
    ? { name: pkBefore.name, columns: pkBefore.columns.map(renamed) }
    : null;
  if (JSON.stringify(pkFollowed) !== JSON.stringify(pkAfter)) {
    if (pkAfter) {
      const name = pkAfter.name ? `CONSTRAINT ${sqlPath([pkAfter.name])} ` : "";
      out.push(
        `${table} ${pkBefore ? "MODIFY" : "ADD"} ${name}PRIMARY KEY (${pkAfter.columns.map((c) => sqlPath([c])).join(", ")}) NOT ENFORCED`,
      );
    } else out.push(`${table} DROP PRIMARY KEY`);
  }
  return out;
}
