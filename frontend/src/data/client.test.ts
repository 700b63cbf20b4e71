import { describe, expect, it } from "vitest";

import { ApiError } from "../api";
import { ERROR_BACKOFF, JOB_POLL_MS, isTransient, shouldRetry } from "./client";
import { collectionOf, keyOf } from "./queries";

const failure = (status: number) => new ApiError(status, { code: "X", message: "x" });

describe("retries", () => {
  it("counts unreachable servers and 5xx as passing trouble, 4xx as final", () => {
    expect(isTransient(failure(0))).toBe(true);
    expect(isTransient(failure(503))).toBe(true);
    expect(isTransient(failure(404))).toBe(false);
    expect(isTransient(failure(429))).toBe(false);
    expect(isTransient(new Error("boom"))).toBe(false);
  });

  it("tries a query again twice through passing trouble only", () => {
    expect(shouldRetry(0, failure(0))).toBe(true);
    expect(shouldRetry(1, failure(500))).toBe(true);
    expect(shouldRetry(2, failure(500))).toBe(false);
    expect(shouldRetry(0, failure(404))).toBe(false);
  });

  it("backs off polling by a whole factor", () => {
    expect(JOB_POLL_MS * ERROR_BACKOFF).toBeGreaterThan(JOB_POLL_MS);
  });
});

describe("query keys", () => {
  it("group every path under its collection, so a write can invalidate all of it", () => {
    expect(collectionOf("/catalogs/demo/databases?page_size=200")).toBe("catalogs");
    expect(collectionOf("/jobs?status=RUNNING")).toBe("jobs");
    expect(collectionOf("/saved-queries")).toBe("saved-queries");
    expect(keyOf("/sessions/abc")).toEqual(["sessions", "/sessions/abc"]);
  });
});
