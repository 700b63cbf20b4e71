import { describe, expect, it } from "vitest";
// The server's rule, read as text: the tables here must say what core/privileges.py says.
import coreSource from "../../../../core/privileges.py?raw";
import type { PrivilegeAssignment, SecurableKind } from "../../api";
import {
  GRANTABLE,
  HOLDS,
  NO_RIGHTS,
  accessRows,
  directPrivileges,
  effectiveLines,
  fullCan,
  grantChange,
  grantable,
  heldFromCan,
  inheritedLabel,
  joinWords,
  meaning,
  principalsOf,
  readOnlyText,
  resolvePrincipal,
  revokeChange,
  sortPrivileges,
} from "./privileges";

const KINDS: SecurableKind[] = ["catalog", "database", "table", "view", "function"];

/** `NAME: Mapping[Kind, frozenset[Privilege]] = { Kind.X: frozenset({P.A, P.B}), … }` → table. */
function pythonTable(name: string): Record<string, string[]> {
  const start = coreSource.indexOf(`\n${name}: Mapping[Kind, frozenset[Privilege]] = {`);
  expect(start, `${name} in core/privileges.py`).toBeGreaterThan(0);
  const body = coreSource.slice(start, coreSource.indexOf("\n}", start));
  const table: Record<string, string[]> = {};
  for (const match of body.matchAll(/Kind\.(\w+): frozenset\(\{([^}]*)\}\)/g)) {
    const members = match[2].split(",").map((part) => part.trim().replace(/^P\./, ""));
    table[match[1].toLowerCase()] = members.map((member) => (member === "READ_FILES" ? "READ FILES" : member));
  }
  return table;
}

describe("the privilege tables", () => {
  it("are core/privileges.py's GRANTABLE and HOLDS", () => {
    const grantableCore = pythonTable("GRANTABLE");
    const holdsCore = pythonTable("HOLDS");
    for (const kind of KINDS) {
      expect([...GRANTABLE[kind]].sort(), kind).toEqual([...grantableCore[kind]].sort());
      expect([...HOLDS[kind]].sort(), kind).toEqual([...holdsCore[kind]].sort());
    }
  });
  it("list what may be granted in the server's order", () => {
    expect(grantable("table")).toEqual(["USE", "SELECT", "MODIFY", "MANAGE"]);
    expect(grantable("view")).toEqual(["USE", "SELECT", "MANAGE"]);
    expect(grantable("function")).toEqual(["USE", "EXECUTE", "MANAGE"]);
    expect(grantable("catalog")).toEqual(["USE", "SELECT", "MODIFY", "CREATE", "EXECUTE", "MANAGE"]);
    // A copy: changing it changes nothing here.
    grantable("table").push("CREATE");
    expect(grantable("table")).not.toContain("CREATE");
  });
  it("say what each grantable privilege means on its kind", () => {
    for (const kind of KINDS) {
      for (const privilege of GRANTABLE[kind]) {
        expect(meaning(privilege, kind), `${privilege} on ${kind}`).not.toBe(privilege);
      }
    }
    expect(meaning("SELECT", "catalog")).toBe("read the rows of every table and view in the catalog");
    expect(meaning("SELECT", "table")).toBe("read its rows");
  });
});

describe("sortPrivileges and joinWords", () => {
  it("order, dedupe and drop unknown names", () => {
    expect(sortPrivileges(["MANAGE", "SELECT", "bogus", "USE", "SELECT"])).toEqual(["USE", "SELECT", "MANAGE"]);
    expect(sortPrivileges([])).toEqual([]);
  });
  it("join words as a sentence does", () => {
    expect(joinWords([])).toBe("");
    expect(joinWords(["USE"])).toBe("USE");
    expect(joinWords(["USE", "SELECT"])).toBe("USE and SELECT");
    expect(joinWords(["USE", "SELECT", "MODIFY"])).toBe("USE, SELECT and MODIFY");
  });
});

const ASSIGNMENTS: PrivilegeAssignment[] = [
  { principal: "everyone", principal_type: "team", privileges: ["USE"], inherited_from: { kind: "catalog", identifier: ["c"] } },
  { principal: "bob", principal_type: "user", privileges: ["SELECT", "USE"], inherited_from: null },
  { principal: "analysts", principal_type: "team", privileges: ["SELECT"], inherited_from: null },
  { principal: "carol", principal_type: "user", privileges: ["MODIFY"], inherited_from: { kind: "database", identifier: ["c", "d"] } },
  { principal: "nobody", principal_type: "user", privileges: [], inherited_from: null },
];

describe("who has access", () => {
  it("lists grants on the object first, then from the database, then from the catalog", () => {
    const rows = accessRows(ASSIGNMENTS);
    expect(rows.map((row) => [row.type, row.principal, row.from ? inheritedLabel(row.from) : null])).toEqual([
      ["team", "analysts", null],
      ["user", "bob", null],
      ["user", "carol", "from database c.d"],
      ["team", "everyone", "from catalog c"],
    ]);
    expect(rows[1].privileges).toEqual(["USE", "SELECT"]);
    expect(new Set(rows.map((row) => row.key)).size).toBe(rows.length);
  });
  it("keeps a principal's direct and inherited grants apart", () => {
    const rows = accessRows([
      { principal: "bob", principal_type: "user", privileges: ["SELECT"], inherited_from: null },
      { principal: "bob", principal_type: "user", privileges: ["USE"], inherited_from: { kind: "catalog", identifier: ["c"] } },
    ]);
    expect(rows.map((row) => row.from?.kind ?? "here")).toEqual(["here", "catalog"]);
    expect(rows[0].key).not.toBe(rows[1].key);
  });
  it("knows what a principal holds on the object itself", () => {
    expect(directPrivileges(ASSIGNMENTS, "user", "bob")).toEqual(["USE", "SELECT"]);
    expect(directPrivileges(ASSIGNMENTS, "team", "Analysts")).toEqual(["SELECT"]); // teams: any case
    expect(directPrivileges(ASSIGNMENTS, "user", "carol")).toEqual([]); // inherited only
    expect(directPrivileges(ASSIGNMENTS, "team", "bob")).toEqual([]); // a user is not a team
  });
});

describe("grant and revoke changes", () => {
  it("add only what the principal does not hold directly", () => {
    expect(grantChange(ASSIGNMENTS, "user", "bob", ["MANAGE", "SELECT"])).toEqual({
      principal: "bob",
      principal_type: "user",
      add: ["MANAGE"],
      remove: [],
    });
    expect(grantChange(ASSIGNMENTS, "team", "newteam", ["SELECT", "USE"])?.add).toEqual(["USE", "SELECT"]);
  });
  it("are null when there is nothing to grant or nobody to grant it to", () => {
    expect(grantChange(ASSIGNMENTS, "user", "bob", ["SELECT"])).toBeNull();
    expect(grantChange(ASSIGNMENTS, "user", "bob", [])).toBeNull();
    expect(grantChange(ASSIGNMENTS, "user", "  ", ["SELECT"])).toBeNull();
  });
  it("trim the typed name", () => {
    expect(grantChange([], "team", " analysts ", ["SELECT"])?.principal).toBe("analysts");
  });
  it("revoke named privileges in order", () => {
    expect(revokeChange("team", "analysts", ["SELECT", "USE"])).toEqual({
      principal: "analysts",
      principal_type: "team",
      add: [],
      remove: ["USE", "SELECT"],
    });
  });
});

describe("what the user may do", () => {
  it("fills in what an older server did not send with no", () => {
    expect(fullCan(undefined)).toEqual(NO_RIGHTS);
    expect(fullCan({ modify: true, drop: true, create: false })).toEqual({ ...NO_RIGHTS, modify: true, drop: true });
  });
  it("reads the privileges held from can, limited to what the kind holds", () => {
    expect(heldFromCan({ ...NO_RIGHTS, select: true }, "table")).toEqual(["SELECT"]);
    expect(heldFromCan({ ...NO_RIGHTS, select: true, write: true, manage: true }, "table")).toEqual([
      "SELECT",
      "MODIFY",
      "MANAGE",
    ]);
    expect(heldFromCan({ ...NO_RIGHTS, execute: true }, "function")).toEqual(["EXECUTE"]);
    expect(heldFromCan({ ...NO_RIGHTS, create: true }, "database")).toEqual(["CREATE"]);
    // A catalog holds no SELECT of its own; a view no MODIFY.
    expect(heldFromCan({ ...NO_RIGHTS, select: true, create: true }, "catalog")).toEqual(["CREATE"]);
    expect(heldFromCan({ ...NO_RIGHTS, write: true }, "view")).toEqual([]);
  });
  it("says in the read-only note what the user holds and who owns it", () => {
    expect(readOnlyText("table", { ...NO_RIGHTS, select: true }, "alice")).toBe(
      "You hold SELECT on this table; its owner is alice. " +
        "Only its owner, holders of MANAGE on it or on what contains it, and admins may change or drop it.",
    );
    expect(readOnlyText("view", NO_RIGHTS, null)).toMatch(/^You may see this view\. Only/);
    expect(readOnlyText("database", { ...NO_RIGHTS, create: true }, "bob")).toMatch(
      /^You hold CREATE on this database; its owner is bob\./,
    );
    expect(readOnlyText("table", { ...NO_RIGHTS, manage: true, modify: true, drop: true }, "alice")).toBe("");
  });
  it("says what each effective privilege lets the user do", () => {
    expect(effectiveLines(["SELECT", "USE"], "table")).toEqual([
      { privilege: "USE", meaning: "see the table: its name, schema and details" },
      { privilege: "SELECT", meaning: "read its rows" },
    ]);
  });
});

describe("principals", () => {
  it("are read from the picker's answer", () => {
    const items = [
      { type: "user" as const, name: "bob" },
      { type: "team" as const, name: "analysts" },
    ];
    expect(principalsOf({ items })).toEqual(items);
    expect(principalsOf(undefined)).toEqual([]);
  });
  const options = [
    { type: "user" as const, name: "bob" },
    { type: "team" as const, name: "Bobs" },
    { type: "team" as const, name: "analysts" },
    { type: "user" as const, name: "analysts" },
  ];
  it("resolve a typed name to the one suggestion of that name", () => {
    expect(resolvePrincipal("bob", options)).toEqual({ type: "user", name: "bob" });
    expect(resolvePrincipal(" bobs ", options)).toEqual({ type: "team", name: "Bobs" });
    expect(resolvePrincipal("nobody", options)).toBeNull();
    expect(resolvePrincipal("", options)).toBeNull();
  });
  it("stay unresolved when a user and a team share the name, unless the type is typed", () => {
    expect(resolvePrincipal("analysts", options)).toBeNull();
    expect(resolvePrincipal("team:analysts", options)).toEqual({ type: "team", name: "analysts" });
    expect(resolvePrincipal("User:analysts", options)).toEqual({ type: "user", name: "analysts" });
    expect(resolvePrincipal("team:", options)).toBeNull();
  });
  it("take the one kind a picker allows", () => {
    expect(resolvePrincipal("carol", [], "user")).toEqual({ type: "user", name: "carol" });
    expect(resolvePrincipal("team:analysts", options, "user")).toBeNull();
  });
});
