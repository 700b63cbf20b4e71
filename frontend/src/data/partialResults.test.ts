import { afterEach, describe, expect, it, vi } from "vitest";

// TanStack Query polls only in a browser (it checks for `window`); tests run in Node.
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window ??= globalThis;
});

import { QueryClient, QueryObserver } from "@tanstack/react-query";

import { ApiError, type ResultPage } from "../api";
import { partialLine } from "../components/results/PartialResultView";
import { resultPageKey, type LoadedPage } from "../components/results/resultCache";
import { ERROR_BACKOFF, JOB_POLL_MS } from "./client";
import { FOLLOW_GAP_MS, LONG_POLL_SECONDS } from "./jobs";
import {
  EMPTY_PARTIAL,
  followStep,
  mergePage,
  partialKey,
  partialPlan,
  partialQuery,
  partialRefetchInterval,
  type PartialResult,
} from "./partialResults";
import { statementBody } from "./statements";

const columns = [{ name: "id", data_type: "BIGINT", nullable: false }];

const page = (rows: number[], rowCount: number, complete = false): ResultPage =>
  ({
    columns,
    rows: rows.map((value) => [value]),
    next_page_token: complete ? null : "t",
    row_count: rowCount,
    complete,
  }) as ResultPage;

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

const notReady = () => json(409, { error: { code: "RESULT_NOT_READY", message: "Job j1 is RUNNING." } });

/** A server for `fetch`: each request answered by the next reply; the URLs asked are kept. */
function server(replies: ((url: string) => Response)[]) {
  const urls: string[] = [];
  const fetch = vi.fn(async (url: string) => {
    urls.push(url);
    const reply = replies.shift();
    if (!reply) throw new Error(`unexpected request ${url}`);
    return reply(url);
  });
  vi.stubGlobal("fetch", fetch);
  return urls;
}

const wake = (offset: number) => `/api/v1/jobs/j1/result?offset=${offset}&page_size=1&wait=${LONG_POLL_SECONDS}`;
const fill = (offset: number, size: number) => `/api/v1/jobs/j1/result?offset=${offset}&page_size=${size}`;

describe("mergePage", () => {
  it("appends the rows after those known, up to a page, and keeps the server's count", () => {
    const first = mergePage(EMPTY_PARTIAL, page([0, 1], 2), 0, 3);
    expect(first).toEqual({ columns, rows: [[0], [1]], written: 2, complete: false });
    const more = mergePage(first, page([2, 3], 5), 2, 3);
    expect(more.rows).toEqual([[0], [1], [2]]);
    expect(more.written).toBe(5);
  });

  it("never lowers the count, and leaves the first page once it is full", () => {
    const full: PartialResult = { columns, rows: [[0], [1]], written: 10, complete: false };
    const later = mergePage(full, page([10], 8), 10, 2);
    expect(later.rows).toBe(full.rows);
    expect(later.written).toBe(10);
  });

  it("takes the finished first page whole", () => {
    const known: PartialResult = { columns, rows: [[0]], written: 1, complete: false };
    const done = mergePage(known, page([0, 1, 2], 3, true), 0, 1000);
    expect(done).toEqual({ columns, rows: [[0], [1], [2]], written: 3, complete: true });
  });
});

describe("followStep", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("waits (held) for the next batch, then fetches the new rows of the first page", async () => {
    const urls = server([() => json(200, page([0], 3)), () => json(200, page([1, 2], 3))]);
    const next = await followStep(null, "j1", EMPTY_PARTIAL, new AbortController().signal, 1000);
    expect(urls).toEqual([wake(0), fill(1, 999)]);
    expect(next).toEqual({ columns, rows: [[0], [1], [2]], written: 3, complete: false });
  });

  it("once the first page is full, only follows the count", async () => {
    const urls = server([() => json(200, page([2], 7))]);
    const known: PartialResult = { columns, rows: [[0], [1]], written: 2, complete: false };
    const next = await followStep(null, "j1", known, new AbortController().signal, 2);
    expect(urls).toEqual([wake(2)]);
    expect(next.rows).toEqual([[0], [1]]);
    expect(next.written).toBe(7);
  });

  it("asks again while nothing is written, after a pause when the server did not hold it", async () => {
    const urls = server([notReady, () => json(200, page([0], 1))]);
    const started = Date.now();
    const next = await followStep(null, "j1", EMPTY_PARTIAL, new AbortController().signal, 1000);
    expect(urls).toEqual([wake(0), wake(0)]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(JOB_POLL_MS - 5);
    expect(next.written).toBe(1);
  });

  it("fetches the finished first page once complete, and keeps it where the result view reads it", async () => {
    const urls = server([() => json(200, page([], 3, true)), () => json(200, page([0, 1, 2], 3, true))]);
    const client = new QueryClient();
    const known: PartialResult = { columns, rows: [[0]], written: 1, complete: false };
    const next = await followStep(client, "j1", known, new AbortController().signal, 1000);
    expect(urls).toEqual([wake(1), fill(0, 1000)]);
    expect(next).toEqual({ columns, rows: [[0], [1], [2]], written: 3, complete: true });
    const seeded = client.getQueryData<LoadedPage>(resultPageKey("j1", 0, null, []));
    expect(seeded?.rows).toEqual([[0], [1], [2]]);
    expect(seeded?.rowCount).toBe(3);
    client.clear();
  });

  it("a job that finished while the page filled: the next round takes the finished page", async () => {
    const urls = server([
      () => json(200, page([0], 2)),
      () => json(200, page([1, 2], 3, true)),
      () => json(200, page([], 3, true)),
      () => json(200, page([0, 1, 2], 3, true)),
    ]);
    const next = await followStep(null, "j1", EMPTY_PARTIAL, new AbortController().signal, 1000);
    expect(urls).toEqual([wake(0), fill(1, 999), wake(2), fill(0, 1000)]);
    expect(next.complete).toBe(true);
    expect(next.rows).toHaveLength(3);
  });

  it("rejects with the server's 404 when the job failed or was canceled (its rows are gone)", async () => {
    server([() => json(404, { error: { code: "NOT_FOUND", message: "Job j1 ended FAILED and has no result." } })]);
    const known: PartialResult = { columns, rows: [[0]], written: 1, complete: false };
    await expect(followStep(null, "j1", known, new AbortController().signal)).rejects.toMatchObject({
      status: 404,
      code: "NOT_FOUND",
    });
  });
});

describe("partialPlan", () => {
  const query = (status: "CREATED" | "RUNNING" | "FINISHED" | "FAILED" | "CANCELED") => ({ kind: "query", status });
  const arrived: PartialResult = { columns, rows: [[0]], written: 5, complete: false };

  it("follows a running query that may stream, and nothing else", () => {
    expect(partialPlan(query("RUNNING"), true, undefined)).toEqual({ enabled: true, stopped: false });
    expect(partialPlan(query("CREATED"), true, undefined).enabled).toBe(true);
    expect(partialPlan(query("RUNNING"), false, undefined).enabled).toBe(false);
    expect(partialPlan({ kind: "insert", status: "RUNNING" }, true, undefined).enabled).toBe(false);
    expect(partialPlan(null, true, undefined).enabled).toBe(false);
  });

  it("after FINISHED, goes on only until the finished first page is in", () => {
    expect(partialPlan(query("FINISHED"), true, undefined).enabled).toBe(false);
    expect(partialPlan(query("FINISHED"), true, arrived).enabled).toBe(true);
    expect(partialPlan(query("FINISHED"), true, { ...arrived, complete: true }).enabled).toBe(false);
  });

  it("stops at once when the job failed or was canceled", () => {
    expect(partialPlan(query("FAILED"), true, arrived)).toEqual({ enabled: false, stopped: true });
    expect(partialPlan(query("CANCELED"), true, undefined)).toEqual({ enabled: false, stopped: true });
  });
});

describe("partialRefetchInterval", () => {
  it("follows until complete, slower through passing trouble, never after a final error", () => {
    expect(partialRefetchInterval(undefined, null)).toBe(FOLLOW_GAP_MS);
    expect(partialRefetchInterval({ ...EMPTY_PARTIAL, written: 4 }, null)).toBe(FOLLOW_GAP_MS);
    expect(partialRefetchInterval({ ...EMPTY_PARTIAL, complete: true }, null)).toBe(false);
    const down = new ApiError(0, { code: "NETWORK_ERROR", message: "x" });
    expect(partialRefetchInterval(undefined, down)).toBe(JOB_POLL_MS * ERROR_BACKOFF);
    expect(partialRefetchInterval(undefined, new ApiError(404, { code: "NOT_FOUND", message: "x" }))).toBe(false);
  });
});

describe("partialQuery", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("accumulates step after step, and cancel aborts the held request", async () => {
    const held: AbortSignal[] = [];
    const replies = [() => json(200, page([0], 1)), () => json(200, page([1], 2))];
    vi.stubGlobal(
      "fetch",
      vi.fn((_url: string, init: RequestInit) => {
        const reply = replies.shift();
        if (reply) return Promise.resolve(reply());
        // Held: answers only when aborted.
        held.push(init.signal as AbortSignal);
        return new Promise((_, reject) =>
          init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
        );
      }),
    );
    const client = new QueryClient();
    const observer = new QueryObserver(client, partialQuery(client, "j1"));
    const seen: number[] = [];
    const unsubscribe = observer.subscribe((result) => {
      if (result.data) seen.push(result.data.written);
    });
    await vi.waitFor(() => expect(held).toHaveLength(1));
    expect(seen).toContain(1);
    expect(seen).toContain(2);
    // The rows of the first step were kept: the second asked from row 1 and appended.
    expect(client.getQueryData<PartialResult>(partialKey("j1"))?.rows).toEqual([[0], [1]]);
    await client.cancelQueries({ queryKey: partialKey("j1") });
    expect(held[0].aborted).toBe(true);
    // What had arrived stays.
    expect(client.getQueryData<PartialResult>(partialKey("j1"))?.written).toBe(2);
    unsubscribe();
    client.clear();
  });
});

describe("partialLine", () => {
  it("says how many rows arrived and whether the job ended without finishing", () => {
    const partial: PartialResult = { columns, rows: [[0]], written: 1234, complete: false };
    expect(partialLine(partial, null)).toBe("1,234 rows so far");
    expect(partialLine(partial, "FAILED")).toContain("before the job failed");
    expect(partialLine(partial, "CANCELED")).toContain("before the job was canceled");
  });
});

describe("statementBody", () => {
  it("sends a row limit with a single statement only", () => {
    expect(statementBody({ sql: "SELECT 1", rowLimit: 1_000_000 })).toMatchObject({ row_limit: 1_000_000 });
    expect(statementBody({ sql: "SELECT 1" })).not.toHaveProperty("row_limit");
    expect(statementBody({ sql: "SELECT 1; SELECT 2", script: true, rowLimit: 5 })).toEqual({
      sql: "SELECT 1; SELECT 2",
      script: true,
    });
  });
});
