// The schema editor's changes for a managed Delta table (pure, deltaAlter.test.ts): Spark's own
// ALTER TABLE statements (docs/statements.md, ADR 0019 "ALTER TABLE"), run one by one as
// statements, so the preview is what runs; what Delta's ALTER cannot express is refused with
// a sentence instead.
import type { Column, Schema } from "../../api";
import { sqlString } from "./ddl";
import { schemaOf, type SchemaDraft } from "./schemaEdit";

/** Every part backtick-quoted (backticks doubled), as the planner writes names itself: a
 * keyword or an odd name stays a name. */
export const quoted = (part: string): string => "`" + part.replaceAll("`", "``") + "`";
const quotedPath = (parts: string[]): string => parts.map(quoted).join(".");

/** A managed Delta table (the planner's `is_managed_delta`): managed, `format` delta, no path
 * or connector. Only these take ALTER TABLE in SQL. */
export function isManagedDelta(table: { managed?: boolean; options?: Record<string, string> | null }): boolean {
  const options = Object.entries(table.options ?? {}).map(([k, v]) => [k.toLowerCase(), String(v).trim().toLowerCase()]);
  if (!table.managed || options.some(([k]) => k === "path" || k === "connector")) return false;
  return options.some(([k, v]) => k === "format" && v === "delta");
}

const NOT_NULL = /\s+NOT\s+NULL\s*$/i;

/** NOT NULL, said either way the catalog keeps it (`nullable: false` or in the type text). */
export const isNotNull = (column: Column): boolean => column.nullable === false || NOT_NULL.test(column.data_type ?? "");

/** The type without NOT NULL, for comparing (case and spaces do not make a new type). */
export const baseType = (dataType: string | undefined): string =>
  (dataType ?? "").replace(NOT_NULL, "").replace(/\s+/g, "").toUpperCase();

/** The type as typed, without a trailing NOT NULL (ADD COLUMNS takes the type alone). */
const typeText = (dataType: string | undefined): string => (dataType ?? "").replace(NOT_NULL, "").trim();

export interface DeltaChanges {
  /** The statements, in the order they run. */
  statements: string[];
  /** Why the draft cannot be applied (empty when it can). */
  refusals: string[];
}

const key = (name: string) => name.toLowerCase();
const mentions = (expression: string, name: string): boolean =>
  new RegExp(`(^|[^A-Za-z0-9_\`])\`?${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\`?($|[^A-Za-z0-9_\`])`, "i").test(
    expression,
  );

/** The changes from `before` to `draft` as Delta's ALTER TABLE statements: drops first, then
 * renames (ordered so a name is free when it is taken), then the added columns, then comments
 * and NOT NULL of the columns by their new names. */
export function deltaStatements(path: string[], before: Schema, draft: SchemaDraft): DeltaChanges {
  const table = `ALTER TABLE ${quotedPath(path)}`;
  const after = schemaOf(draft);
  const refusals: string[] = [];
  const refuse = (text: string) => {
    if (!refusals.includes(text)) refusals.push(text);
  };

  // Names first: every column needs one, once.
  const seen = new Set<string>();
  for (const column of after.columns) {
    if (!column.name) refuse("Every column needs a name.");
    else if (seen.has(key(column.name))) refuse(`Two columns are named \`${column.name}\`.`);
    seen.add(key(column.name));
  }

  const kept = new Map<string, { old: Column; now: Column }>();
  const added: Column[] = [];
  draft.rows.forEach((row, index) => {
    const now = after.columns[index];
    const old = row.origin === null ? undefined : before.columns.find((c) => key(c.name) === key(row.origin!));
    if (old) kept.set(key(old.name), { old, now });
    else added.push(now);
  });
  const dropped = before.columns.filter((c) => !kept.has(key(c.name)));
  const renames = [...kept.values()].filter(({ old, now }) => now.name && old.name !== now.name);
  const computed = before.columns.filter((c) => c.kind === "computed");
  const watermarkColumns = new Set(before.watermarks.map((w) => key(w.column)));

  for (const column of dropped) {
    if (column.kind !== "physical")
      refuse(`\`${column.name}\` is a ${column.kind} column (Tessera's, not stored in the Delta table): it cannot be removed here.`);
  }
  for (const { old } of renames) {
    if (old.kind !== "physical")
      refuse(`\`${old.name}\` is a ${old.kind} column (Tessera's, not stored in the Delta table): it cannot be renamed here.`);
  }
  for (const column of [...dropped, ...renames.map((r) => r.old)]) {
    if (watermarkColumns.has(key(column.name)))
      refuse(`\`${column.name}\` is the watermark's column: the watermark would not follow a rename or a removal.`);
    for (const user of computed)
      if (key(user.name) !== key(column.name) && mentions(user.expression ?? "", column.name))
        refuse(
          `The computed column \`${user.name}\` reads \`${column.name}\`: its expression would not follow a rename or a removal.`,
        );
  }
  for (const column of added) {
    if (column.kind !== "physical") {
      refuse(`\`${column.name || "(unnamed)"}\`: a managed Delta table takes only physical columns here (no computed or metadata columns).`);
      continue;
    }
    if (!typeText(column.data_type)) refuse(`The new column \`${column.name || "(unnamed)"}\` needs a type.`);
    if (isNotNull(column))
      refuse(
        `The new column \`${column.name}\` cannot be NOT NULL: the rows already in the table have no value for it (add it, fill it with UPDATE, then set NOT NULL).`,
      );
  }
  for (const { old, now } of kept.values()) {
    if (old.kind !== now.kind) refuse(`\`${old.name}\` cannot become a ${now.kind} column.`);
    else if (old.kind === "physical" && baseType(old.data_type) !== baseType(now.data_type))
      refuse(
        `\`${old.name}\` keeps its type ${typeText(old.data_type)}: Delta's ALTER TABLE does not change a column's type (add a new column and fill it with UPDATE instead).`,
      );
    else if (old.kind === "computed" && (old.expression ?? "").trim() !== (now.expression ?? "").trim())
      refuse(`\`${old.name}\` is a computed column: its expression cannot be changed on a managed Delta table.`);
    else if (old.kind === "metadata" && (old.data_type ?? "") !== (now.data_type ?? ""))
      refuse(`\`${old.name}\` is a metadata column: its type cannot be changed on a managed Delta table.`);
    if (old.kind !== "physical" && (old.comment ?? "") !== (now.comment ?? ""))
      refuse(`\`${old.name}\` is a ${old.kind} column: its comment is Tessera's and cannot be changed here.`);
  }

  // The key and watermark as they were, the renames followed (the catalog follows a rename).
  const renamed = (name: string) => kept.get(key(name))?.now.name ?? "";
  const followedKey = before.primary_key
    ? { name: before.primary_key.name, columns: before.primary_key.columns.map(renamed) }
    : null;
  if (JSON.stringify(followedKey) !== JSON.stringify(after.primary_key))
    refuse("The primary key cannot be changed on a managed Delta table: Delta's ALTER TABLE has no form for it.");
  const followedWatermarks = before.watermarks.map((w) => ({ column: renamed(w.column), expression: w.expression }));
  if (JSON.stringify(followedWatermarks) !== JSON.stringify(after.watermarks))
    refuse("The watermark cannot be changed on a managed Delta table: Delta's ALTER TABLE has no form for it.");

  if (refusals.length) return { statements: [], refusals };

  const statements: string[] = [];
  const physicalDrops = dropped.filter((c) => c.kind === "physical");
  if (physicalDrops.length) statements.push(`${table} DROP COLUMNS (${physicalDrops.map((c) => quoted(c.name)).join(", ")})`);

  // A rename waits while its new name is still another pending rename's old name; a cycle
  // (a swap) cannot be ordered and is refused.
  let pending = renames.map(({ old, now }) => ({ from: old.name, to: now.name }));
  while (pending.length) {
    const ready = pending.find((r) => !pending.some((o) => o !== r && key(o.from) === key(r.to)));
    if (!ready) {
      return {
        statements: [],
        refusals: [
          `The renames ${pending.map((r) => `\`${r.from}\` → \`${r.to}\``).join(", ")} swap names: rename through a new name in one change and finish in another.`,
        ],
      };
    }
    statements.push(`${table} RENAME COLUMN ${quoted(ready.from)} TO ${quoted(ready.to)}`);
    pending = pending.filter((r) => r !== ready);
  }

  if (added.length) {
    const columns = added.map((c) => {
      const comment = c.comment ? ` COMMENT ${sqlString(c.comment)}` : "";
      return `${quoted(c.name)} ${typeText(c.data_type)}${comment}`;
    });
    statements.push(`${table} ADD COLUMNS (${columns.join(", ")})`);
  }

  for (const { old, now } of kept.values()) {
    if (old.kind !== "physical") continue;
    const column = `${table} ALTER COLUMN ${quoted(now.name)}`;
    if ((old.comment ?? "") !== (now.comment ?? "")) statements.push(`${column} COMMENT ${sqlString(now.comment ?? "")}`);
    if (isNotNull(old) !== isNotNull(now)) statements.push(`${column} ${isNotNull(now) ? "SET" : "DROP"} NOT NULL`);
  }
  return { statements, refusals: [] };
}

/** `COMMENT ON TABLE` of a managed Delta table (an empty comment removes it). */
export const tableCommentStatement = (path: string[], comment: string): string =>
  `COMMENT ON TABLE ${quotedPath(path)} IS ${comment.trim() ? sqlString(comment) : "NULL"}`;
