// Pure logic of the create-table form: form state → the docs/api.md table JSON, and the
// server's `details.field` paths → the form field that shows the error.

export const METADATA_KEYS = [
  "file_path",
  "file_name",
  "file_size",
  "file_block_start",
  "file_block_length",
  "file_modification_time",
  "row_index",
] as const;

export const FORMATS = ["parquet", "csv", "json", "orc", "text"] as const;

export type RowKind = "physical" | "computed" | "metadata";

export interface ColumnRow {
  id: number;
  kind: RowKind;
  name: string;
  dataType: string;
  notNull: boolean;
  expression: string;
  metadataKey: string;
  virtual: boolean;
  comment: string;
}

export interface OptionRow {
  id: number;
  key: string;
  value: string;
}

export interface TableForm {
  name: string;
  comment: string;
  columns: ColumnRow[];
  watermarkColumn: string;
  watermarkExpression: string;
  pkName: string;
  pkColumns: string[];
  storage: "managed" | "external";
  format: string;
  connector: string;
  path: string;
  options: OptionRow[];
  partitionBy: string[];
}

let nextId = 1;
export const newId = (): number => nextId++;

export function emptyColumn(kind: RowKind = "physical"): ColumnRow {
  return {
    id: newId(),
    kind,
    name: "",
    dataType: kind === "metadata" ? "STRING" : "",
    notNull: false,
    expression: "",
    metadataKey: "file_path",
    virtual: true,
    comment: "",
  };
}

export function emptyForm(): TableForm {
  return {
    name: "",
    comment: "",
    columns: [emptyColumn()],
    watermarkColumn: "",
    watermarkExpression: "",
    pkName: "",
    pkColumns: [],
    storage: "managed",
    format: "parquet",
    connector: "parquet",
    path: "",
    options: [],
    partitionBy: [],
  };
}

export interface ApiColumn {
  name: string;
  kind: RowKind;
  data_type?: string;
  expression?: string;
  metadata_key?: string;
  virtual?: boolean;
  comment?: string;
}

export interface TableRequest {
  name: string;
  comment: string;
  schema: {
    columns: ApiColumn[];
    watermarks: { column: string; expression: string }[];
    primary_key: { name: string | null; columns: string[] } | null;
  };
  options: Record<string, string>;
  partition_by: string[];
}

/** The data type as sent: a physical NOT NULL column gets ` NOT NULL` appended once. */
export function columnType(row: ColumnRow): string {
  const type = row.dataType.trim();
  if (row.kind !== "physical" || !row.notNull) return type;
  return /\bNOT\s+NULL\s*$/i.test(type) ? type : `${type} NOT NULL`;
}

export function toColumn(row: ColumnRow): ApiColumn {
  const name = row.name.trim();
  // A column's comment is sent only when one is typed (none is not an empty one).
  const comment = row.comment.trim() ? { comment: row.comment.trim() } : {};
  if (row.kind === "computed") return { name, kind: "computed", expression: row.expression.trim(), ...comment };
  if (row.kind === "metadata")
    return {
      name,
      kind: "metadata",
      data_type: row.dataType.trim(),
      metadata_key: row.metadataKey,
      virtual: row.virtual,
      ...comment,
    };
  return { name, kind: "physical", data_type: columnType(row), ...comment };
}

/** The POST body of `/catalogs/{c}/databases/{d}/tables` (docs/api.md). */
export function toTableRequest(form: TableForm): TableRequest {
  const options: Record<string, string> = {};
  if (form.storage === "managed") {
    if (form.format) options["format"] = form.format;
  } else {
    options["connector"] = form.connector;
    options["path"] = form.path.trim();
  }
  for (const option of form.options) {
    const key = option.key.trim();
    if (key) options[key] = option.value;
  }
  const watermarks =
    form.watermarkColumn && form.watermarkExpression.trim()
      ? [{ column: form.watermarkColumn, expression: form.watermarkExpression.trim() }]
      : [];
  const primaryKey =
    form.pkColumns.length > 0
      ? { name: form.pkName.trim() || null, columns: [...form.pkColumns] }
      : null;
  return {
    name: form.name.trim(),
    comment: form.comment,
    schema: { columns: form.columns.map(toColumn), watermarks, primary_key: primaryKey },
    options,
    partition_by: [...form.partitionBy],
  };
}

/** Where an error shows in the form. Row errors are keyed by the row's id. */
export type ErrorTarget =
  | { area: "name" }
  | { area: "comment" }
  | { area: "columns" }
  | { area: "column"; row: number; field: "name" | "data_type" | "expression" | "metadata_key" | "comment" | "row" }
  | { area: "watermark"; field: "column" | "expression" }
  | { area: "primary_key"; field: "name" | "columns" }
  | { area: "options"; key: string }
  | { area: "partition_by" }
  | { area: "general" };

const COLUMN_FIELD = /^schema\.columns\[(\d+)\](?:\.(\w+))?/;

/** Map the server's `details.field` (e.g. `schema.columns[2].data_type`) to a form place. */
export function errorTarget(field: string | undefined, form: TableForm): ErrorTarget {
  if (!field) return { area: "general" };
  if (field === "name") return { area: "name" };
  if (field === "comment") return { area: "comment" };
  const column = COLUMN_FIELD.exec(field);
  if (column) {
    const row = form.columns[Number(column[1])];
    if (!row) return { area: "columns" };
    const sub = column[2];
    const known = ["name", "data_type", "expression", "metadata_key", "comment"] as const;
    const match = known.find((k) => k === sub);
    if (match) return { area: "column", row: row.id, field: match };
    if (sub === "virtual") return { area: "column", row: row.id, field: "metadata_key" };
    return { area: "column", row: row.id, field: "row" };
  }
  if (field === "schema.columns" || field === "schema") return { area: "columns" };
  if (field.startsWith("schema.watermarks"))
    return { area: "watermark", field: field.endsWith(".column") ? "column" : "expression" };
  if (field.startsWith("schema.primary_key"))
    return { area: "primary_key", field: field.endsWith(".name") ? "name" : "columns" };
  if (field === "options") return { area: "options", key: "" };
  if (field.startsWith("options.")) return { area: "options", key: field.slice("options.".length) };
  if (field.startsWith("partition_by")) return { area: "partition_by" };
  return { area: "general" };
}

/** A stable string key for an error target, to look errors up while rendering. */
export function targetKey(target: ErrorTarget): string {
  switch (target.area) {
    case "column":
      return `column:${target.row}:${target.field}`;
    case "watermark":
      return `watermark:${target.field}`;
    case "primary_key":
      return `primary_key:${target.field}`;
    case "options":
      return `options:${target.key}`;
    default:
      return target.area;
  }
}

/** Whether creating this table waits for Spark's analyzer on a worker (FLIP-164: computed
 * columns and watermarks are typed before the table is stored; a table without them is not). */
export function needsAnalyzer(form: TableForm): boolean {
  const computed = form.columns.some((c) => c.kind === "computed" && c.expression.trim() !== "");
  return computed || (form.watermarkColumn !== "" && form.watermarkExpression.trim() !== "");
}

/** Names usable in watermark / primary key / partition selects (non-empty, in order). */
export function columnNames(form: TableForm): string[] {
  return form.columns.map((c) => c.name.trim()).filter((n) => n.length > 0);
}

/** Move a row up (-1) or down (+1); out-of-range moves change nothing. */
export function moveRow<T>(rows: T[], index: number, delta: -1 | 1): T[] {
  const to = index + delta;
  if (index < 0 || index >= rows.length || to < 0 || to >= rows.length) return rows;
  const copy = [...rows];
  [copy[index], copy[to]] = [copy[to], copy[index]];
  return copy;
}
