import { describe, expect, it } from "vitest";
// The server's list of actions, read as text: the page offers exactly those.
import auditModels from "../../../../audit/models.py?raw";
import type { AuditEvent } from "../../api";
import {
  AUDIT_ACTIONS,
  NO_AUDIT_FILTERS,
  auditApiParams,
  auditFiltersFromSearch,
  describeEvent,
  hasAuditFilters,
  objectText,
  searchOfAuditFilters,
  toggleAction,
  type AuditFilters,
} from "./audit";

describe("audit filters", () => {
  it("offer the server's actions, in its order", () => {
    const names = [...auditModels.matchAll(/^([A-Z_]+) = "([a-z_]+)"$/gm)].map((match) => match[2]);
    expect(names.length).toBeGreaterThan(5);
    expect([...AUDIT_ACTIONS]).toEqual(names);
  });
  it("round-trip through the URL", () => {
    const filters: AuditFilters = {
      ...NO_AUDIT_FILTERS,
      action: ["grant", "revoke"],
      actor: "alice",
      principal: "team:analysts",
      object: "c.d",
      since: "2024-05-01T13:30",
    };
    const search = searchOfAuditFilters(filters);
    expect(search).toBe(
      "?action=grant%2Crevoke&actor=alice&principal=team%3Aanalysts&object=c.d&since=2024-05-01T13%3A30",
    );
    expect(auditFiltersFromSearch(new URLSearchParams(search))).toEqual(filters);
  });
  it("keep the actions in the server's order and drop unknown ones", () => {
    expect(auditFiltersFromSearch(new URLSearchParams("action=Revoke,bogus,grant")).action).toEqual(["grant", "revoke"]);
    expect(searchOfAuditFilters({ ...NO_AUDIT_FILTERS, action: ["drop", "grant"] })).toBe("?action=grant%2Cdrop");
  });
  it("leave nothing for no filters, or for blanks", () => {
    expect(searchOfAuditFilters(NO_AUDIT_FILTERS)).toBe("");
    expect(hasAuditFilters({ ...NO_AUDIT_FILTERS, actor: "   " })).toBe(false);
    expect(hasAuditFilters({ ...NO_AUDIT_FILTERS, job: "x" })).toBe(true);
  });
  it("become API parameters", () => {
    const params = auditApiParams({
      ...NO_AUDIT_FILTERS,
      action: ["read"],
      objectKind: "table",
      actor: " bob ",
      until: "2024-05-01T13:30",
      since: "not a time",
    });
    expect(params.action).toBe("read");
    expect(params.object_kind).toBe("table");
    expect(params.actor).toBe("bob");
    expect(params.until).toMatch(/^2024-05-01T\d\d:30:00\.000Z$/);
    expect(params.since).toBeUndefined();
    expect(params.principal).toBeUndefined();
  });
  it("toggle one action", () => {
    const on = toggleAction(NO_AUDIT_FILTERS, "revoke", true);
    expect(toggleAction(on, "grant", true).action).toEqual(["grant", "revoke"]);
    expect(toggleAction(on, "revoke", false).action).toEqual([]);
    expect(NO_AUDIT_FILTERS.action).toEqual([]); // not changed in place
  });
});

const EVENT: AuditEvent = {
  id: 1,
  at: "2024-05-01T12:00:00Z",
  actor: "alice",
  action: "grant",
  object_kind: "table",
  object: ["c", "d", "t"],
  principal: { type: "team", name: "analysts" },
  privileges: ["SELECT"],
  job: null,
  detail: {},
};

describe("an event in words", () => {
  it("names grants, revokes and owners", () => {
    expect(describeEvent(EVENT)).toBe("granted SELECT on table c.d.t to team analysts");
    expect(describeEvent({ ...EVENT, action: "revoke", privileges: ["USE", "SELECT"] })).toBe(
      "revoked USE, SELECT on table c.d.t from team analysts",
    );
    expect(
      describeEvent({ ...EVENT, action: "owner", principal: { type: "user", name: "bob" }, detail: { previous: "alice" } }),
    ).toBe("made user bob the owner of table c.d.t (was alice)");
  });
  it("names drops and access", () => {
    expect(describeEvent({ ...EVENT, action: "drop", principal: null, privileges: [] })).toBe("dropped table c.d.t");
    expect(describeEvent({ ...EVENT, action: "read", detail: { via: { kind: "view", identifier: ["c", "d", "v"] } } })).toBe(
      "read table c.d.t through view c.d.v",
    );
    expect(describeEvent({ ...EVENT, action: "read", detail: { via: ["c", "d", "v"] } })).toBe(
      "read table c.d.t through view c.d.v",
    );
    expect(describeEvent({ ...EVENT, action: "write" })).toBe("wrote into table c.d.t");
    expect(describeEvent({ ...EVENT, action: "denied", privileges: [], detail: { privilege: "SELECT" } })).toBe(
      "was refused SELECT on table c.d.t",
    );
  });
  it("names creations, changes and explains", () => {
    const plain = { ...EVENT, principal: null, privileges: [] };
    expect(describeEvent({ ...plain, action: "create" })).toBe("created table c.d.t");
    expect(describeEvent({ ...plain, action: "alter", detail: { changed: ["schema"], schema_before: {} } })).toBe(
      "changed the schema of table c.d.t",
    );
    expect(describeEvent({ ...plain, action: "alter" })).toBe("changed the definition of table c.d.t");
    expect(describeEvent({ ...EVENT, action: "explain", privileges: ["SELECT"] })).toBe(
      "explained a query over table c.d.t",
    );
  });
  it("names team events whether the team is the object or the principal", () => {
    const asObject = { ...EVENT, object_kind: "team", object: ["analysts"], privileges: [] };
    expect(describeEvent({ ...asObject, action: "team_create", principal: null })).toBe("created team analysts");
    expect(describeEvent({ ...asObject, action: "member_add", principal: { type: "user", name: "bob" } })).toBe(
      "added bob to team analysts",
    );
    expect(
      describeEvent({ ...EVENT, action: "member_remove", object: [], object_kind: "", detail: { member: "bob" } }),
    ).toBe("removed bob from team analysts");
    expect(describeEvent({ ...EVENT, action: "team_delete", object: [], object_kind: "" })).toBe("deleted team analysts");
  });
  it("names a token by its name and id and its owner, never its key", () => {
    const token = { ...EVENT, object_kind: "token", object: [], privileges: [], principal: { type: "user" as const, name: "bob" } };
    expect(describeEvent({ ...token, action: "token_create", detail: { token: 7, name: "ci" } })).toBe(
      'created token "ci" #7 of bob',
    );
    expect(describeEvent({ ...token, action: "token_revoke", detail: { token: 7, name: "", reason: "logout" } })).toBe(
      "revoked token #7 of bob (signed out)",
    );
  });
  it("names an engine by its short id and whose it is", () => {
    const engine = { ...EVENT, object_kind: "engine", object: [], privileges: [] };
    const detail = { engine: "0b7c9e8a-1111-2222-3333-444455556666", share_key: "user:3" };
    expect(describeEvent({ ...engine, action: "engine_restart", principal: { type: "user", name: "bob" }, detail })).toBe(
      "asked to restart engine 0b7c9e8a of user bob",
    );
    expect(describeEvent({ ...engine, action: "engine_stop", principal: null, detail })).toBe("asked to stop engine 0b7c9e8a");
  });
  it("says what an unknown action did as well as it can", () => {
    expect(describeEvent({ ...EVENT, action: "teleport" })).toBe("teleport table c.d.t");
  });
  it("names objects by kind and path", () => {
    expect(objectText({ object_kind: "catalog", object: ["c"] })).toBe("catalog c");
    expect(objectText({ object_kind: "storage", object: ["/data/x"] })).toBe("storage root /data/x");
    expect(objectText({ object_kind: "", object: [] })).toBe("");
  });
});
