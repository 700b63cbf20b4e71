import { describe, expect, it } from "vitest";
import { QueryClient } from "@tanstack/react-query";
import { invalidate, keyOf, staleAfter } from "./queries";

describe("staleAfter", () => {
  it("adds search and the audit log to a catalog write, and nothing to jobs", () => {
    expect(staleAfter(["catalogs"])).toEqual(["catalogs", "search", "audit"]);
    expect(staleAfter(["jobs"])).toEqual(["jobs"]);
    expect(staleAfter(["catalogs", "search"])).toEqual(["catalogs", "search", "audit"]);
  });
  it("makes what the teams decide stale after a team write", () => {
    expect(staleAfter(["teams"])).toEqual(["teams", "principals", "users", "catalogs", "search", "audit"]);
  });
});

describe("invalidate", () => {
  it("marks cached search answers stale when the catalog changes", async () => {
    const client = new QueryClient();
    client.setQueryData(keyOf("/search?q=doomed"), { items: [] });
    client.setQueryData(keyOf("/jobs"), { items: [] });
    await invalidate(client, "catalogs");
    expect(client.getQueryState(keyOf("/search?q=doomed"))?.isInvalidated).toBe(true);
    expect(client.getQueryState(keyOf("/jobs"))?.isInvalidated).toBe(false);
  });
});
