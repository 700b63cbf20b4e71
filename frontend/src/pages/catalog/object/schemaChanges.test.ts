import { describe, expect, it } from "vitest";
import type { SchemaChange, SchemaChangeItem } from "../../../api";
import { changeText, eventLines } from "./schemaChanges";

const item = (change: string, column: string | null, before: unknown, after: unknown): SchemaChangeItem =>
  ({ change, column, before, after }) as SchemaChangeItem;

const event = (action: string, changes: SchemaChangeItem[]): SchemaChange =>
  ({ id: 1, at: "2026-12-07T02:00:00Z", actor: "alice", action, changes }) as SchemaChange;

describe("a schema change in words", () => {
  it("names columns added, dropped and retyped", () => {
    expect(changeText(item("added", "note", null, "STRING"))).toBe("added column note STRING");
    expect(changeText(item("dropped", "qty", "INT", null))).toBe("dropped column qty (INT)");
    expect(changeText(item("type", "qty", "INT", "BIGINT"))).toBe("changed qty from INT to BIGINT");
  });

  it("tells comments set, changed and removed", () => {
    expect(changeText(item("comment", "a", null, "the key"))).toBe("commented a: “the key”");
    expect(changeText(item("comment", "a", "x", "y"))).toBe("changed the comment of a from “x” to “y”");
    expect(changeText(item("comment", "a", "x", null))).toBe("removed the comment of a");
  });

  it("tells the order, the key and the watermarks", () => {
    expect(changeText(item("moved", null, ["a", "b"], ["b", "a"]))).toBe("reordered the columns: b, a");
    expect(changeText(item("primary_key", null, null, ["a"]))).toBe("set the primary key (a)");
    expect(changeText(item("primary_key", null, ["a"], ["a", "b"]))).toBe("changed the primary key from (a) to (a, b)");
    expect(changeText(item("primary_key", null, ["a"], null))).toBe("removed the primary key");
    expect(changeText(item("watermarks", null, [], []))).toBe("set the watermarks: none");
  });

  it("names a kind it does not know as it is", () => {
    expect(changeText(item("partitioning", null, null, null))).toBe("partitioning");
    expect(changeText(item("renamed", "b", "a", "b"))).toBe("renamed b");
  });
});

describe("an event's lines", () => {
  it("says what a table was created with", () => {
    const created = event("create", [item("added", "id", null, "BIGINT"), item("added", "qty", null, "INT")]);
    expect(eventLines(created)).toEqual(["created the table with 2 columns: id BIGINT, qty INT"]);
    expect(eventLines(event("create", []))).toEqual(["created the table with 0 columns"]);
  });

  it("lists an alter's changes one a line, or says the schema changed", () => {
    const altered = event("alter", [item("type", "qty", "INT", "BIGINT"), item("added", "note", null, "STRING")]);
    expect(eventLines(altered)).toEqual(["changed qty from INT to BIGINT", "added column note STRING"]);
    expect(eventLines(event("alter", []))).toEqual(["changed the schema"]);
  });
});
