import { afterEach, describe, expect, it, vi } from "vitest";

// TanStack Query polls only in a browser (it checks for `window`); tests run in Node.
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window ??= globalThis;
});

import { QueryClient } from "@tanstack/react-query";

import { ApiError, isAbort, type Job, type JobStatus } from "../api";
import { JOB_POLL_MS } from "./client";
import { FOLLOW_GAP_MS, LONG_POLL_SECONDS, followJob, jobRefetchInterval } from "./jobs";

const job = (status: JobStatus): Job =>
  ({
    id: "j1",
    session: "s1",
    user: "ada",
    sql: "SELECT 1",
    kind: "query",
    status,
    target: null,
    progress: { stages_total: 0, stages_done: 0, tasks_total: 0, tasks_done: 0 },
    error: null,
    created_at: "2026-01-01T00:00:00Z",
    started_at: null,
    finished_at: null,
    result: null,
  }) as Job;

const answer = (status: number, body: unknown, etag?: string) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...(etag ? { ETag: etag } : {}) },
  });

describe("jobRefetchInterval", () => {
  it("follows a job that has not ended, and stops once it has", () => {
    expect(jobRefetchInterval(undefined, null)).toBe(FOLLOW_GAP_MS);
    expect(jobRefetchInterval(job("CREATED"), null)).toBe(FOLLOW_GAP_MS);
    expect(jobRefetchInterval(job("RUNNING"), null)).toBe(FOLLOW_GAP_MS);
    for (const status of ["FINISHED", "FAILED", "CANCELED"] as const)
      expect(jobRefetchInterval(job(status), null)).toBe(false);
  });

  it("slows down through passing trouble and stops on a final error", () => {
    const unreachable = new ApiError(0, { code: "NETWORK_ERROR", message: "x" });
    const missing = new ApiError(404, { code: "NOT_FOUND", message: "x" });
    expect(jobRefetchInterval(job("RUNNING"), unreachable)).toBeGreaterThan(JOB_POLL_MS);
    expect(jobRefetchInterval(job("RUNNING"), missing)).toBe(false);
  });
});

describe("followJob", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("follows the job query until the job ends, reporting each state", async () => {
    const states: JobStatus[] = ["RUNNING", "RUNNING", "FINISHED"];
    const fetch = vi.fn(async () => answer(200, job(states.shift() ?? "FINISHED")));
    vi.stubGlobal("fetch", fetch);
    const client = new QueryClient();
    const seen: string[] = [];
    const ended = await followJob(client, "j1", (j) => seen.push(j.status), new AbortController().signal);
    expect(ended.status).toBe("FINISHED");
    expect(seen.at(-1)).toBe("FINISHED");
    expect(seen).toContain("RUNNING");
    expect(fetch).toHaveBeenCalledTimes(3);
    // Nobody follows it any more: no further requests.
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS * 2));
    expect(fetch).toHaveBeenCalledTimes(3);
    client.clear();
  });

  it("long-polls with the ETag last seen, and waits before asking again when not held", async () => {
    const calls: { url: string; etag: string | null; at: number }[] = [];
    const replies = [
      () => answer(200, { ...job("RUNNING"), id: "j2" }, '"v1"'),
      () => new Response(null, { status: 304, headers: { ETag: '"v1"' } }),
      () => answer(200, { ...job("FINISHED"), id: "j2" }, '"v2"'),
    ];
    const fetch = vi.fn(async (url: string, init: RequestInit) => {
      const headers = init.headers as Record<string, string>;
      calls.push({ url, etag: headers["If-None-Match"] ?? null, at: Date.now() });
      return (replies.shift() ?? replies[replies.length - 1])();
    });
    vi.stubGlobal("fetch", fetch);
    const client = new QueryClient();
    const ended = await followJob(client, "j2", () => undefined, new AbortController().signal);
    expect(ended.status).toBe("FINISHED");
    expect(calls.map((c) => [c.url, c.etag])).toEqual([
      ["/api/v1/jobs/j2", null],
      [`/api/v1/jobs/j2?wait=${LONG_POLL_SECONDS}`, '"v1"'],
      [`/api/v1/jobs/j2?wait=${LONG_POLL_SECONDS}`, '"v1"'],
    ]);
    // The 304 came at once (the server did not hold it): the next ask waited.
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(JOB_POLL_MS - 5);
    client.clear();
  });

  it("rejects with the server's error when the job is gone", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => answer(404, { error: { code: "NOT_FOUND", message: "No such job." } })));
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    await expect(followJob(client, "j1", () => undefined, new AbortController().signal)).rejects.toMatchObject({
      status: 404,
      code: "NOT_FOUND",
    });
    client.clear();
  });

  it("rejects with an AbortError when the run is canceled", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => answer(200, job("RUNNING"))));
    const client = new QueryClient();
    const controller = new AbortController();
    const following = followJob(client, "j1", () => undefined, controller.signal);
    controller.abort();
    const error = await following.catch((e: unknown) => e);
    expect(isAbort(error)).toBe(true);
    client.clear();
  });
});
