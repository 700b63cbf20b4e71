// Jobs as queries: one job polled until it ends, followed from React (useJob) or from async
// code that runs statements one after another (followJob) — the same query either way.
import {
  QueryObserver,
  queryOptions,
  useQuery,
  useQueryClient,
  type QueryClient,
} from "@tanstack/react-query";
import { useCallback } from "react";
import { ApiError, TERMINAL, abortError, enc, get, type Job } from "../api";
import { ERROR_BACKOFF, JOB_POLL_MS, isTransient } from "./client";
import { keyOf } from "./queries";

/** When to fetch a job again: never once it has ended or after a final (4xx) error, slower
 * through passing trouble, every JOB_POLL_MS otherwise. */
export function jobRefetchInterval(job: Job | undefined, error: unknown): number | false {
  if (error) return isTransient(error) ? JOB_POLL_MS * ERROR_BACKOFF : false;
  if (job && TERMINAL.has(job.status)) return false;
  return JOB_POLL_MS;
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

const getJob = (path: string, signal: AbortSignal) => get<Job>(path, { signal });

export interface UseJob {
  job: Job | null;
  error: ApiError | null;
  /** Fetch again now (polling resumes by itself while the job has not ended). */
  reload: () => void;
  /** Replace the held job, e.g. with the answer of a cancel. */
  setJob: (job: Job) => void;
}

/** A job, polled every JOB_POLL_MS while it is not terminal; polling stops once it is
 * FINISHED, FAILED or CANCELED, on a 4xx error such as 404, and when nobody shows it. */
export function useJob(id: string | null | undefined): UseJob {
  const client = useQueryClient();
  const query = useQuery({ ...jobQuery(id ?? ""), enabled: !!id });
  const { refetch } = query;
  const reload = useCallback(() => void refetch(), [refetch]);
  const setJob = useCallback((job: Job) => client.setQueryData(keyOf(jobPath(job.id)), job), [client]);
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
