// Status badge, progress bar and job helpers (cancelJob, formatDuration), shared by the
// editor, the jobs pages and the result view. Following a job lives in data/jobs.ts.
import { TERMINAL, enc, post, type Job } from "../../api";
import { formatDuration, progressFraction } from "./time";
import "./jobs.css";

export { formatDuration };

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
