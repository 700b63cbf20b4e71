// The one data layer for server state: TanStack Query. Every GET goes through a query
// (cached under its API path, aborted through the signal the query passes), every write
// through a mutation that invalidates what it changed. The polling cadences live here.
import { QueryClient } from "@tanstack/react-query";
import { ApiError } from "../api";

/** How often a job that has not ended is fetched again (editor run, job page, progress). */
export const JOB_POLL_MS = 500;
/** How often a list is fetched again while something in it is still changing (running jobs,
 * staged tables). */
export const LIST_POLL_MS = 2000;
/** How often the engines page asks again: engines start, stop and take jobs on their own. */
export const ENGINE_POLL_MS = 5000;
/** After a network error or a 5xx, polling goes on this much slower. */
export const ERROR_BACKOFF = 4;

/** Passing trouble worth asking again: the server could not be reached, or answered 5xx. A
 * 4xx answer is final. */
export function isTransient(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 0 || error.status >= 500);
}

/** A failed query is tried again twice when the failure was passing trouble. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  return failureCount < 2 && isTransient(error);
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: shouldRetry, refetchOnWindowFocus: false, staleTime: 0 },
      mutations: { retry: false },
    },
  });
}
