// A table's schema changes (GET …/tables/{t}/schema-changes) in words, for its History tab:
// "added column note STRING", "changed qty from INT to BIGINT". Pure (schemaChanges.test.ts).
import type { SchemaChange, SchemaChangeItem } from "../../../api";
import { countOf } from "../../../format";

const list = (value: unknown): string =>
  Array.isArray(value) && value.length ? value.map(String).join(", ") : "none";

const quoted = (value: unknown): string => `“${String(value)}”`;

/** One change as a phrase. An unknown kind (a newer server) is named as it is. */
export function changeText(item: SchemaChangeItem): string {
  const column = item.column ?? "";
  switch (item.change) {
    case "added":
      return `added column ${column} ${String(item.after ?? "")}`.trimEnd();
    case "dropped":
      return `dropped column ${column}${item.before ? ` (${String(item.before)})` : ""}`;
    case "type":
      return `changed ${column} from ${String(item.before ?? "?")} to ${String(item.after ?? "?")}`;
    case "comment":
      if (item.before === null || item.before === undefined) return `commented ${column}: ${quoted(item.after)}`;
      if (item.after === null || item.after === undefined) return `removed the comment of ${column}`;
      return `changed the comment of ${column} from ${quoted(item.before)} to ${quoted(item.after)}`;
    case "moved":
      return `reordered the columns: ${list(item.after)}`;
    case "primary_key":
      if (item.after === null || item.after === undefined) return "removed the primary key";
      return item.before === null || item.before === undefined
        ? `set the primary key (${list(item.after)})`
        : `changed the primary key from (${list(item.before)}) to (${list(item.after)})`;
    case "watermarks":
      return `set the watermarks: ${list(item.after)}`;
    default:
      return `${item.change}${column ? ` ${column}` : ""}`;
  }
}

/** What one event did: a creation with its columns, or its changes (one phrase each). */
export function eventLines(event: SchemaChange): string[] {
  if (event.action === "create") {
    const columns = event.changes.filter((item) => item.change === "added");
    const described = columns.map((item) => `${item.column} ${String(item.after ?? "")}`.trimEnd());
    return [`created the table with ${countOf(columns.length, "column")}${described.length ? `: ${described.join(", ")}` : ""}`];
  }
  return event.changes.length ? event.changes.map(changeText) : ["changed the schema"];
}
