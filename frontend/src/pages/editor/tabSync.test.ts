import { describe, expect, it } from "vitest";
import { plan, reconcile, type Known, type ServerTab } from "./tabSync";
import { isUuid, newId, type TabMeta } from "./types";

const A = "00000000-0000-4000-8000-00000000000a";
const B = "00000000-0000-4000-8000-00000000000b";
const C = "00000000-0000-4000-8000-00000000000c";

function tab(id: string, sql = "", extra: Partial<TabMeta> = {}): TabMeta {
  return { id, title: `t${id.slice(-1)}`, sql, sessionId: null, savedQueryId: null, ...extra };
}

function known(id: string, sql = "", position = 0, version = 1): [string, Known] {
  return [id, { title: `t${id.slice(-1)}`, sql, position, savedQueryId: null, catalog: null, database: null, version }];
}

function server(id: string, sql = "", position = 0, version = 1, active = false): ServerTab {
  return {
    id,
    title: `t${id.slice(-1)}`,
    sql,
    position,
    active,
    saved_query_id: null,
    catalog: null,
    database: null,
    version,
    created_at: "",
    updated_at: "",
  };
}

describe("tab ids", () => {
  it("are random UUIDs", () => {
    const id = newId();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe("4");
    expect(newId()).not.toBe(id);
    expect(isUuid("k2x9a0b1lq3z")).toBe(false);
  });
});

describe("the writes a plan sends", () => {
  it("is nothing when the server has what the page shows", () => {
    expect(plan([tab(A, "x"), tab(B)], A, new Map([known(A, "x", 0), known(B, "", 1)]), A)).toEqual([]);
  });

  it("creates new tabs, patches changed fields on their version, deletes closed ones, then activates", () => {
    const ops = plan([tab(B, "new text"), tab(C)], C, new Map([known(A), known(B, "old", 1, 4)]), A);
    expect(ops).toEqual([
      { kind: "patch", id: B, version: 4, changes: { sql: "new text", position: 0 } },
      {
        kind: "create",
        id: C,
        body: { title: "tc", sql: "", position: 1, savedQueryId: null, catalog: null, database: null, active: true },
      },
      { kind: "delete", id: A },
    ]);
    // The active tab is set once the server has it.
    const after = plan([tab(B, "new text"), tab(C)], C, new Map([known(B, "new text", 0), known(C, "", 1)]), A);
    expect(after).toEqual([{ kind: "activate", id: C }]);
  });
});

describe("the server's list against the cache", () => {
  it("is the server's tabs, with this browser's session and an edit not sent yet", () => {
    const cached = {
      tabs: [tab(A, "typed here", { version: 2, sessionId: "s1" }), tab(B, "old", { version: 1 }), tab(C, "never sent")],
      active: C,
    };
    const merged = reconcile(cached, {
      items: [server(B, "written elsewhere", 0, 3), server(A, "on the server", 1, 2, true)],
      active: A,
      limits: { max_tabs: 50, max_chars: 100 },
    });
    expect(merged.tabs.map((t) => [t.id, t.sql, t.version, t.sessionId])).toEqual([
      [B, "written elsewhere", 3, null],
      [A, "typed here", 2, "s1"],
      [C, "never sent", undefined, null],
    ]);
    expect(merged.active).toBe(A);
    // The edit made here on version 2 is what the next plan sends.
    expect(plan(merged.tabs, merged.active, merged.known, A)[0]).toEqual({
      kind: "patch",
      id: A,
      version: 2,
      changes: { sql: "typed here" },
    });
  });

  it("drops the empty tab a first paint made up, unless the server has none", () => {
    const cached = { tabs: [tab(C)], active: C };
    const limits = { max_tabs: 50, max_chars: 100 };
    expect(reconcile(cached, { items: [server(A)], active: A, limits }).tabs.map((t) => t.id)).toEqual([A]);
    expect(reconcile(cached, { items: [], active: null, limits }).tabs.map((t) => t.id)).toEqual([C]);
  });

  it("keeps SQL typed here on an older version when the server's newer one left the SQL", () => {
    const limits = { max_tabs: 50, max_chars: 100 };
    // Typed here on version 1 (the server had ""); version 2 only changed the tab's database.
    const cached = { tabs: [tab(A, "typed here", { version: 1, serverSql: "" })], active: A };
    const merged = reconcile(cached, { items: [server(A, "", 0, 2)], active: A, limits });
    expect(merged.tabs.map((t) => [t.id, t.sql, t.version, t.serverSql])).toEqual([[A, "typed here", 2, ""]]);
    // …and it is the next write.
    expect(plan(merged.tabs, A, merged.known, A)[0]).toEqual({ kind: "patch", id: A, version: 2, changes: { sql: "typed here" } });
  });

  it("shows the server's SQL when both changed it, and this window's in a tab beside it", () => {
    const limits = { max_tabs: 50, max_chars: 100 };
    const cached = { tabs: [tab(A, "typed here", { version: 1, serverSql: "old" })], active: A };
    const merged = reconcile(cached, { items: [server(A, "written elsewhere", 0, 2)], active: A, limits });
    expect(merged.tabs.map((t) => [t.sql, t.version])).toEqual([
      ["written elsewhere", 2],
      ["typed here", null],
    ]);
    expect(merged.tabs[1].title).toBe("ta (this window)");
  });

  it("drops cached tabs closed elsewhere", () => {
    const merged = reconcile(
      { tabs: [tab(A, "", { version: 1 }), tab(B, "", { version: 5 })], active: B },
      { items: [server(A)], active: null, limits: { max_tabs: 50, max_chars: 100 } },
    );
    expect(merged.tabs.map((t) => t.id)).toEqual([A]);
    expect(merged.active).toBe(A);
  });
});
