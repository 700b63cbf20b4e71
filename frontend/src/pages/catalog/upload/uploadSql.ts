// The statements of an upload into a database: a temporary table over the upload, the
// preview (each column cast to the type the user chose, so Spark checks the types), and the
// CREATE TABLE … AS / INSERT … BY NAME that keep the rows. Every identifier is backticked.

/** One column as the dialog edits it: the upload's column, its new name and Spark type. */
export interface UploadColumn {
  source: string;
  name: string;
  type: string;
}

/** A SQL identifier in backticks (backticks inside doubled): keywords and odd names too. */
export const quoted = (name: string): string => "`" + name.replaceAll("`", "``") + "`";

export const pathSql = (parts: string[]): string => parts.map(quoted).join(".");

/** The media type the uploads endpoint reads a file as, by its name (CSV unless Parquet). */
export function mediaTypeOf(file: { name: string; type: string }): string {
  const name = file.name.toLowerCase();
  if (name.endsWith(".parquet") || name.endsWith(".parq") || file.type === "application/vnd.apache.parquet")
    return "application/vnd.apache.parquet";
  return "text/csv";
}

/** The session's temporary table over an upload (a name of its own per upload). */
export const temporaryTableOf = (uploadId: string): string => `__upload_${uploadId.replaceAll("-", "").slice(0, 12)}`;

export const createTemporarySql = (uploadId: string): string =>
  `CREATE TEMPORARY TABLE ${quoted(temporaryTableOf(uploadId))} WITH ('connector' = 'upload', 'upload' = '${uploadId.replaceAll("'", "''")}')`;

/** The select list: each column cast to its chosen type under its chosen name. */
export const castsSql = (columns: UploadColumn[]): string =>
  columns.map((c) => `CAST(${quoted(c.source)} AS ${c.type.trim()}) AS ${quoted(c.name.trim())}`).join(", ");

export const selectSql = (uploadId: string, columns: UploadColumn[]): string =>
  `SELECT ${castsSql(columns)} FROM ${quoted(temporaryTableOf(uploadId))}`;

export const previewSql = (uploadId: string, columns: UploadColumn[], limit = 20): string =>
  `${selectSql(uploadId, columns)} LIMIT ${limit}`;

export const createSql = (target: string[], uploadId: string, columns: UploadColumn[]): string =>
  `CREATE TABLE ${pathSql(target)} AS ${selectSql(uploadId, columns)}`;

/** Appending matches the columns to the table's by name (Spark's BY NAME). */
export const appendSql = (target: string[], uploadId: string, columns: UploadColumn[]): string =>
  `INSERT INTO ${pathSql(target)} BY NAME ${selectSql(uploadId, columns)}`;

/** What is wrong with the columns before anything runs (empty or repeated names), or null. */
export function columnsProblem(columns: UploadColumn[]): string | null {
  const seen = new Set<string>();
  for (const column of columns) {
    const name = column.name.trim();
    if (!name) return "Every column needs a name.";
    if (!column.type.trim()) return `Column ${name} needs a type.`;
    if (seen.has(name.toLowerCase())) return `Two columns are named ${name} (Spark ignores case).`;
    seen.add(name.toLowerCase());
  }
  return columns.length ? null : "The upload has no columns.";
}

/** A table name from a file name: its stem, lower case, letters, digits and underscores. */
export function tableNameOf(fileName: string): string {
  const stem = fileName.replace(/\.[^.]*$/, "").toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  return stem || "uploaded";
}
