// The first rows of a result while its job still writes it (docs/adr/0020-results-that-stream.md,
// docs/api.md "Results that stream"). A large result is written a record batch at a time; its
// result pages answer the rows written so far with `complete: false`, and a page asked with
// `wait` is held by the server until its rows are written or the job ends. Following it is a
// long-poll: ask for the one row after those known (held until the next batch), then fetch the
// new rows of the first page; once the server says `complete: true` the finished first page is
// fetched and put where the result view reads it, so the grid swaps with no empty moment.
import { useEffect } from "react";
import { queryOptions, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { ApiError, TERMINAL, enc, get, sleep, type Job, type ResultColumn, type ResultPage } from "../api";
import { PAGE_SIZE } from "../components/results/model";
import { seedFirstPage } from "../components/results/resultCache";
import { JOB_POLL_MS, isTransient, ERROR_BACKOFF } from "./client";
import { FOLLOW_GAP_MS, LONG_POLL_SECONDS, jobPath } from "./jobs";

/** A page request answered sooner than this without news was not held (no held request left
 * in the server process, or the job is not writing a large result): the next one waits. */
const HELD_AT_LEAST_MS = 200;

/** A result as far as it has been written. */
export interface PartialResult {
  columns: ResultColumn[];
  /** The first page as written so far (at most `pageSize` rows). */
  rows: unknown[][];
  /** Rows of the whole result written so far (the live count). */
  written: number;
  /** The server said `complete: true`: `rows` is the finished result's first page. */
  complete: boolean;
}

export const EMPTY_PARTIAL: PartialResult = { columns: [], rows: [], written: 0, complete: false };

/** What an answer adds: `page` holds rows from `offset` on; the count is the server's. */
export function mergePage(known: PartialResult, page: ResultPage, offset: number, pageSize = PAGE_SIZE): PartialResult {
  const rows =
    offset <= known.rows.length && offset < pageSize
      ? [...known.rows.slice(0, offset), ...page.rows].slice(0, pageSize)
      : known.rows;
  return {
    columns: page.columns.length ? page.columns : known.columns,
    rows,
    // The count never goes back: a page answered from an older progress mark says less.
    written: Math.max(known.written, page.row_count, rows.length),
    complete: page.complete,
  };
}

/** Not written yet (409 RESULT_NOT_READY: no batch yet, or a result written whole at the end). */
export const notWrittenYet = (error: unknown): boolean => error instanceof ApiError && error.status === 409;

const pagePath = (jobId: string, offset: number, size: number, wait: number | null) =>
  `/jobs/${enc(jobId)}/result?offset=${offset}&page_size=${size}${wait ? `&wait=${wait}` : ""}`;

/** One step of following: answers once something is new — rows past `known.written`, or the
 * result complete (its first page then fetched whole and kept for the result view). A
 * 404 (the job failed or was canceled: its rows were removed) rejects with that ApiError. */
export async function followStep(
  client: QueryClient | null,
  jobId: string,
  known: PartialResult,
  signal: AbortSignal,
  pageSize = PAGE_SIZE,
): Promise<PartialResult> {
  let current = known;
  for (;;) {
    const started = Date.now();
    let woke: ResultPage | null = null;
    try {
      // Held by the server until row `written` exists or the job ends.
      woke = await get<ResultPage>(pagePath(jobId, current.written, 1, LONG_POLL_SECONDS), { signal });
    } catch (error) {
      if (!notWrittenYet(error)) throw error;
    }
    if (woke?.complete) {
      const first = await get<ResultPage>(pagePath(jobId, 0, pageSize, null), { signal });
      if (client) seedFirstPage(client, jobId, first);
      return mergePage(current, first, 0, pageSize);
    }
    if (woke) current = mergePage(current, woke, current.written, pageSize);
    if (woke && current.rows.length < pageSize && current.written > current.rows.length) {
      // The first page is not full: fetch the rows written since (at once, no wait).
      const offset = current.rows.length;
      const more = await get<ResultPage>(pagePath(jobId, offset, pageSize - offset, null), { signal });
      if (more.complete) continue; // finished meanwhile: the next round fetches the whole page
      current = mergePage(current, more, offset, pageSize);
    }
    if (current.written > known.written) return current;
    // Nothing new: ask again, at once if the server held the request, else after a pause.
    if (Date.now() - started < HELD_AT_LEAST_MS) await sleep(JOB_POLL_MS, signal);
  }
}

export const partialKey = (jobId: string) => ["jobs", jobPath(jobId), "partial"] as const;

/** When to follow again: at once while the result is incomplete, slower through passing
 * trouble, never after a final error or once complete. */
export function partialRefetchInterval(data: PartialResult | undefined, error: unknown): number | false {
  if (error) return isTransient(error) ? JOB_POLL_MS * ERROR_BACKOFF : false;
  if (data?.complete) return false;
  return FOLLOW_GAP_MS;
}

export function partialQuery(client: QueryClient, jobId: string) {
  const key = partialKey(jobId);
  return queryOptions({
    queryKey: key,
    queryFn: ({ signal }) =>
      followStep(client, jobId, client.getQueryData<PartialResult>(key) ?? EMPTY_PARTIAL, signal),
    refetchInterval: (query) => partialRefetchInterval(query.state.data, query.state.error),
    refetchIntervalInBackground: true,
    retry: false,
    staleTime: Infinity,
  });
}

/** Whether to follow `job`'s rows now, and whether it ended without finishing: follow a query
 * that may stream while it has not ended, and after it FINISHED once rows came until the
 * finished first page is in; never once it failed or was canceled. */
export function partialPlan(
  job: Pick<Job, "kind" | "status"> | null,
  mayStream: boolean,
  known: PartialResult | undefined,
): { enabled: boolean; stopped: boolean } {
  if (!job || !mayStream || job.kind !== "query") return { enabled: false, stopped: false };
  const stopped = job.status === "FAILED" || job.status === "CANCELED";
  if (stopped || known?.complete) return { enabled: false, stopped };
  const running = !TERMINAL.has(job.status);
  return { enabled: running || (known?.rows.length ?? 0) > 0, stopped };
}

export interface UsePartialResult {
  /** What has arrived (null: no row yet). */
  partial: PartialResult | null;
  /** Rows arrived and the finished first page is not in yet: show the partial grid. */
  showing: boolean;
  /** The job failed or was canceled after rows arrived: they are kept, marked as cut short. */
  cutShort: boolean;
}

/** The rows of `job`'s result while it writes it, when the run may stream (`mayStream`: it
 * asked for a row limit above what is collected whole; otherwise nothing is asked). Following
 * goes on after the job FINISHED until the finished first page is in; it stops (the held
 * request aborted) as soon as the job failed or was canceled. */
export function usePartialResult(job: Job | null, mayStream: boolean): UsePartialResult {
  const client = useQueryClient();
  const id = job?.id ?? "";
  const key = partialKey(id);
  const { enabled, stopped } = partialPlan(job, mayStream, job ? client.getQueryData<PartialResult>(key) : undefined);
  const query = useQuery({ ...partialQuery(client, id), enabled });
  useEffect(() => {
    // Cancel (or a failure) ends the job: the held page request goes with it.
    if (stopped) void client.cancelQueries({ queryKey: partialKey(id) });
  }, [client, id, stopped]);
  const partial = job && query.data && query.data.written > 0 ? query.data : null;
  return {
    partial,
    showing: !!partial && !partial.complete && partial.rows.length > 0,
    cutShort: !!partial && stopped,
  };
}
