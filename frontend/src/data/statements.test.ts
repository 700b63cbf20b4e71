import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// TanStack Query polls only in a browser (it checks for `window`); tests run in Node.
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window ??= globalThis;
});

import { QueryClient } from "@tanstack/react-query";

import type { Job, JobStatus, ResultPage } from "../api";
import { PAGE_SIZE } from "../components/results/model";
import { resultPageKey, type LoadedPage } from "../components/results/resultCache";
import { jobPath } from "./jobs";
import { keyOf } from "./queries";
import {
  FIRST_ANSWER_WAIT_SECONDS,
  runToEnd,
  startStatement,
  statementBody,
  type SessionSource,
} from "./statements";

const job = (status: JobStatus, id = "j1"): Job =>
  ({
    id,
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
    result:
      status === "FINISHED" ? { columns: [{ name: "a", data_type: "INT" }], row_count: 1, truncated: false } : null,
  }) as Job;

const page: ResultPage = { columns: [{ name: "a", data_type: "INT", nullable: true }], rows: [[1]], next_page_token: null, row_count: 1, complete: true };

const answer = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

const missing = () => answer(404, { error: { code: "NOT_FOUND", message: "No such session." } });

/** Sessions s1, s2, … : each `forget` makes the next `current` a new one. */
function sessions(): SessionSource & { forgotten: number } {
  let n = 1;
  const source = {
    forgotten: 0,
    current: async () => `s${n}`,
    forget: () => {
      source.forgotten++;
      n++;
    },
  };
  return source;
}

type Call = { url: string; method: string; body: unknown };

function server(replies: (() => Response)[]) {
  const calls: Call[] = [];
  const fetch = vi.fn(async (url: string, init: RequestInit) => {
    calls.push({ url, method: init.method ?? "GET", body: init.body ? JSON.parse(String(init.body)) : undefined });
    const reply = replies.shift();
    if (!reply) throw new Error(`unexpected request ${url}`);
    return reply();
  });
  vi.stubGlobal("fetch", fetch);
  return calls;
}

beforeEach(() => vi.stubGlobal("document", { cookie: "csrftoken=t" }));
afterEach(() => vi.unstubAllGlobals());

describe("statementBody", () => {
  it("asks for the first page with a held answer for one statement", () => {
    expect(statementBody({ sql: "SELECT 1" })).toEqual({ sql: "SELECT 1", wait: FIRST_ANSWER_WAIT_SECONDS, page_size: PAGE_SIZE });
    expect(statementBody({ sql: "SELECT :a", parameters: { a: 1 }, wait: 5 })).toEqual({
      sql: "SELECT :a",
      wait: 5,
      page_size: PAGE_SIZE,
      parameters: { a: 1 },
    });
  });

  it("sends no parameters when there are none, and neither wait nor page_size with a script", () => {
    expect(statementBody({ sql: "SELECT 1", parameters: {} })).not.toHaveProperty("parameters");
    expect(statementBody({ sql: "SELECT 1; SELECT 2", script: true })).toEqual({ sql: "SELECT 1; SELECT 2", script: true });
  });
});

describe("startStatement", () => {
  it("opens a new session once when the session answers 404, and sends the statement again", async () => {
    const calls = server([missing, () => answer(201, job("RUNNING"))]);
    const source = sessions();
    const jobs = await startStatement(source, { sql: "SELECT 1" });
    expect(jobs.map((j) => j.id)).toEqual(["j1"]);
    expect(source.forgotten).toBe(1);
    expect(calls.map((c) => c.url)).toEqual(["/api/v1/sessions/s1/statements", "/api/v1/sessions/s2/statements"]);
    expect(calls[1].body).toEqual(calls[0].body);
  });

  it("retries only once: a second 404 is the caller's error", async () => {
    server([missing, missing]);
    const source = sessions();
    await expect(startStatement(source, { sql: "SELECT 1" })).rejects.toMatchObject({ status: 404 });
    expect(source.forgotten).toBe(1);
  });

  it("does not retry other errors", async () => {
    const calls = server([() => answer(400, { error: { code: "PARSE_ERROR", message: "x" } })]);
    const source = sessions();
    await expect(startStatement(source, { sql: "SELEC" })).rejects.toMatchObject({ code: "PARSE_ERROR" });
    expect(source.forgotten).toBe(0);
    expect(calls).toHaveLength(1);
  });

  it("answers every job of a script", async () => {
    server([() => answer(201, { jobs: [job("CREATED", "a"), job("CREATED", "b")] })]);
    const jobs = await startStatement(sessions(), { sql: "SELECT 1; SELECT 2", script: true });
    expect(jobs.map((j) => j.id)).toEqual(["a", "b"]);
  });
});

describe("runToEnd", () => {
  it("is one request for a short SELECT: the job and its first page come in the POST's answer", async () => {
    const calls = server([() => answer(201, { ...job("FINISHED"), result_page: page })]);
    const client = new QueryClient();
    const { job: ended, firstPage } = await runToEnd(client, sessions(), { sql: "SELECT 1" }, new AbortController().signal);
    expect(calls).toHaveLength(1);
    expect(calls[0].method).toBe("POST");
    expect(ended.status).toBe("FINISHED");
    expect(ended).not.toHaveProperty("result_page");
    expect(firstPage).toEqual(page);
    // The result view and the job query find them without asking.
    const seeded = client.getQueryData<LoadedPage>(resultPageKey("j1", 0, null, []));
    expect(seeded?.rows).toEqual([[1]]);
    expect(seeded?.rowCount).toBe(1);
    expect(client.getQueryData<Job>(keyOf(jobPath("j1")))?.status).toBe("FINISHED");
    client.clear();
  });

  it("follows a job that had not ended when the POST answered", async () => {
    const calls = server([() => answer(201, job("RUNNING")), () => answer(200, job("FINISHED"))]);
    const client = new QueryClient();
    const { job: ended, firstPage } = await runToEnd(client, sessions(), { sql: "SELECT 1" }, new AbortController().signal);
    expect(ended.status).toBe("FINISHED");
    expect(firstPage).toBeNull();
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(["POST /api/v1/sessions/s1/statements", "GET /api/v1/jobs/j1"]);
    expect(client.getQueryData(resultPageKey("j1", 0, null, []))).toBeUndefined();
    client.clear();
  });
});
