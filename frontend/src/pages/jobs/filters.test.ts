import { describe, expect, it } from "vitest";
import { NO_FILTERS, apiParams, filtersFromSearch, oneLine, searchOfFilters } from "./filters";

describe("job filters", () => {
  it("round-trip through the URL", () => {
    const filters = {
      status: ["RUNNING", "CREATED"] as ("RUNNING" | "CREATED")[],
      kind: "query",
      createdAfter: "2024-05-01T13:30",
      createdBefore: "",
      q: "range(",
      user: "*",
    };
    const search = searchOfFilters(filters);
    expect(search).toBe("?status=RUNNING%2CCREATED&kind=query&created_after=2024-05-01T13%3A30&q=range%28&user=*");
    expect(filtersFromSearch(new URLSearchParams(search))).toEqual(filters);
  });
  it("drop unknown statuses and keep nothing for no filters", () => {
    expect(filtersFromSearch(new URLSearchParams("status=running,bogus")).status).toEqual(["RUNNING"]);
    expect(searchOfFilters(NO_FILTERS)).toBe("");
  });
  it("become API parameters", () => {
    const params = apiParams({ ...NO_FILTERS, status: ["FAILED"], createdAfter: "2024-05-01T13:30", q: "  x " });
    expect(params.status).toBe("FAILED");
    expect(params.q).toBe("x");
    expect(params.created_after).toMatch(/^2024-05-01T\d\d:30:00\.000Z$/);
    expect(params.created_before).toBeUndefined();
    expect(params.user).toBeUndefined();
    expect(apiParams({ ...NO_FILTERS, user: " bob " }).user).toBe("bob");
  });
});

describe("oneLine", () => {
  it("flattens and cuts", () => {
    expect(oneLine("SELECT 1\n  FROM t")).toBe("SELECT 1 FROM t");
    expect(oneLine("x".repeat(10), 5)).toBe("xxxx…");
  });
});
