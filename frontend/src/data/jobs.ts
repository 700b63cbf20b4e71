// Jobs as queries: one job followed until it ends, from React (useJob) or from async code that
// runs statements one after another (followJob) — the same query either way. Following is a
// long-poll: GET /jobs/{id}?wait=… with the ETag last seen is held by the server until the
// job changes (its status, progress, a cancel), so a change shows as it happens, and a job
// that does not change costs one request per LONG_POLL_SECONDS.
import {
  QueryObserver,
  queryOptions,
  useQuery,
  useQueryClient,
  type QueryClient,
} from "@tanstack/react-query";
import { useCallback } from "react";
import { ApiError, TERMINAL, abortError, enc, getIfChanged, sleep, type Job } from "../api";
import { ERROR_BACKOFF, JOB_POLL_MS, isTransient } from "./client";
import { keyOf } from "./queries";

/** How long the server may hold one request (API: GET /jobs/{id}?wait=, at most 30 s). */
export const LONG_POLL_SECONDS = 25;
/** A long-poll answered sooner than this without a change was not held (the server holds
 * as many as it can): the next one waits JOB_POLL_MS, so that is the most it ever polls. */
const HELD_AT_LEAST_MS = 200;
/** While a job has not ended, the next long-poll starts this soon after the last answer
 * (TanStack skips a tick while one is still in flight). */
export const FOLLOW_GAP_MS = 5;

/** When to fetch a job again: never once it has ended or after a final (4xx) error, slower
 * through passing trouble, right away otherwise (each fetch is a held long-poll). */
export function jobRefetchInterval(job: Job | undefined, error: unknown): number | false {
  if (error) return isTransient(error) ? JOB_POLL_MS * ERROR_BACKOFF : false;
  if (job && TERMINAL.has(job.status)) return false;
  return FOLLOW_GAP_MS;
}

/** The version (ETag) last seen of each job being followed, by path (dropped once it ends). */
const seen = new Map<string, string | null>();

/** The job at `path` once it differs from what was last seen (at once the first time). */
export async function getJob(path: string, signal: AbortSignal): Promise<Job> {
  for (;;) {
    const etag = seen.get(path);
    const started = Date.now();
    const url = etag ? `${path}?wait=${LONG_POLL_SECONDS}` : path;
    const answer = await getIfChanged<Job>(url, etag ?? null, { signal });
    if (answer) {
      if (TERMINAL.has(answer.data.status)) seen.delete(path);
      else seen.set(path, answer.etag);
      return answer.data;
    }
    // Not changed: ask again, at once if the server held the request, else after a pause.
    if (Date.now() - started < HELD_AT_LEAST_MS) await sleep(JOB_POLL_MS, signal);
  }
}

export const jobPath = (id: string) => `/jobs/${enc(id)}`;

export function jobQuery(id: string) {
  const path = jobPath(id);
  return queryOptions({
    queryKey: keyOf(path),
    queryFn: ({ signal }) => getJob(path, signal),
    refetchInterval: (query) => jobRefetchInterval(query.state.data, query.state.error),
    // A run goes on (a script to its next statement) while the browser tab is hidden.
    refetchIntervalInBackground: true,
    retry: false,
  });
}

export interface UseJob {
  job: Job | null;
  error: ApiError | null;
  /** Fetch again now (following resumes by itself while the job has not ended). */
  reload: () => void;
  /** Replace the held job, e.g. with the answer of a cancel. */
  setJob: (job: Job) => void;
}

/** A job, followed (long-polled) while it is not terminal; following stops once it is
 * FINISHED, FAILED or CANCELED, on a 4xx error such as 404, and when nobody shows it. */
export function useJob(id: string | null | undefined): UseJob {
  const client = useQueryClient();
  const query = useQuery({ ...jobQuery(id ?? ""), enabled: !!id });
  const { refetch } = query;
  const reload = useCallback(() => void refetch(), [refetch]);
  const setJob = useCallback((job: Job) => {
    seen.delete(jobPath(job.id)); // its ETag is not known: the next fetch answers at once
    client.setQueryData(keyOf(jobPath(job.id)), job);
  }, [client]);
  const error =
    query.error instanceof ApiError || query.error === null
      ? query.error
      : new ApiError(0, { code: "NETWORK_ERROR", message: String(query.error) });
  return { job: id ? (query.data ?? null) : null, error, reload, setJob };
}

/** Follow a job until it ends, calling `onUpdate` with each state; resolves with the ended
 * job, rejects with an ApiError (4xx) or an AbortError when `signal` aborts. */
export function followJob(
  client: QueryClient,
  id: string,
  onUpdate: (job: Job) => void,
  signal: AbortSignal,
): Promise<Job> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError());
    const observer = new QueryObserver(client, jobQuery(id));
    const stop = () => {
      unsubscribe();
      signal.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      settled = true;
      stop();
      reject(abortError());
    };
    let settled = false;
    const handle = (result: ReturnType<typeof observer.getCurrentResult>) => {
      if (settled) return;
      if (result.data) onUpdate(result.data);
      if (result.data && TERMINAL.has(result.data.status)) {
        settled = true;
        stop();
        resolve(result.data);
      } else if (result.error && !isTransient(result.error) && !result.isFetching) {
        settled = true;
        stop();
        reject(result.error);
      }
    };
    const unsubscribe = observer.subscribe(handle);
    signal.addEventListener("abort", onAbort);
    handle(observer.getCurrentResult());
  });
}
