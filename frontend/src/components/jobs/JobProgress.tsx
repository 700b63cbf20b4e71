// Status badge, progress bar and live job helpers (useJob, cancelJob, formatDuration), shared
// by the editor, the jobs pages and the result view.
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, TERMINAL, enc, get, post, type Job } from "../../api";
import { formatDuration, progressFraction } from "./time";
import "./jobs.css";

export { formatDuration };

/** How often useJob polls a job that has not ended. */
export const JOB_POLL_MS = 500;

/** The status as a coloured badge (class status-<STATUS>). */
export function JobStatusBadge({ status }: { status: Job["status"] }) {
  return (
    <span className={`badge status-${status}`} data-testid="job-status">
      {status}
    </span>
  );
}

/** A progress bar from stages and tasks, with the counts as text too. Indeterminate while a
 * job is RUNNING (or queued) and Spark has reported no tasks yet. */
export function JobProgress({ job }: { job: Job }) {
  const { stages_done, stages_total, tasks_done, tasks_total } = job.progress;
  const fraction = progressFraction(job);
  const waiting = !TERMINAL.has(job.status) && fraction === null;
  const percent = fraction === null ? 0 : Math.round(fraction * 100);
  const text =
    stages_total > 0 || tasks_total > 0
      ? `stages ${stages_done}/${stages_total} · tasks ${tasks_done}/${tasks_total}`
      : job.status === "CREATED"
        ? "queued"
        : job.status === "RUNNING"
          ? "starting…"
          : "no Spark tasks";
  return (
    <div className="job-progress" data-testid="job-progress">
      <div
        className={`job-progress-track${waiting ? " indeterminate" : ""}`}
        role="progressbar"
        aria-label="Job progress"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={waiting ? undefined : percent}
        aria-valuetext={waiting ? text : `${percent}% (${text})`}
      >
        <div
          className={`job-progress-fill status-fill-${job.status}`}
          style={waiting ? undefined : { width: `${percent}%` }}
        />
      </div>
      <span className="job-progress-text muted">{text}</span>
    </div>
  );
}

/** Ask the server to cancel a job; answers the job as it is now. */
export function cancelJob(id: string): Promise<Job> {
  return post<Job>(`/jobs/${enc(id)}/cancel`);
}

export interface UseJob {
  job: Job | null;
  error: ApiError | null;
  /** Fetch again now (and resume polling if the job has not ended). */
  reload: () => void;
  /** Replace the held job, e.g. with the answer of cancelJob. */
  setJob: (job: Job) => void;
}

/** A job, polled every ~500 ms (GET /jobs/{id}) while it is not terminal; polling stops once
 * it is FINISHED, FAILED or CANCELED, on an error such as 404, and on unmount. */
export function useJob(id: string | null | undefined): UseJob {
  const [job, setJobState] = useState<Job | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [generation, setGeneration] = useState(0);
  const latest = useRef<Job | null>(null);

  const setJob = useCallback((next: Job) => {
    latest.current = next;
    setJobState(next);
    // A job that is not terminal any more (or never was) needs the poller running.
    if (!TERMINAL.has(next.status)) setGeneration((n) => n + 1);
  }, []);

  useEffect(() => {
    latest.current = null;
    setJobState(null);
    setError(null);
  }, [id]);

  useEffect(() => {
    if (!id) return;
    let stopped = false;
    let timer: number | undefined;
    const controller = new AbortController();
    const tick = async () => {
      try {
        const next = await get<Job>(`/jobs/${enc(id)}`, { signal: controller.signal });
        if (stopped) return;
        latest.current = next;
        setJobState(next);
        setError(null);
        if (!TERMINAL.has(next.status)) timer = window.setTimeout(tick, JOB_POLL_MS);
      } catch (failure) {
        if (stopped || (failure instanceof DOMException && failure.name === "AbortError")) return;
        const apiError =
          failure instanceof ApiError
            ? failure
            : new ApiError(0, { code: "NETWORK_ERROR", message: String(failure) });
        setError(apiError);
        // Keep trying through passing network trouble; a 4xx answer is final.
        if (apiError.status === 0 || apiError.status >= 500)
          timer = window.setTimeout(tick, JOB_POLL_MS * 4);
      }
    };
    void tick();
    return () => {
      stopped = true;
      controller.abort();
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [id, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { job, error, reload, setJob };
}
