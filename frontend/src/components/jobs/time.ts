// Pure time helpers for jobs (unit-tested in time.test.ts); formats come from format.ts.
import type { Job } from "../../api";
import { formatMillis } from "../../format";

const TERMINAL_STATUSES = new Set(["FINISHED", "FAILED", "CANCELED"]);

/** How long the job ran (started → finished, or → now while it runs); "—" before it starts.
 * A job that ended without starting (failed planning, canceled while queued) counts from its
 * creation. */
export function jobDurationMillis(
  job: Pick<Job, "status" | "created_at" | "started_at" | "finished_at">,
  now: number = Date.now(),
): number | null {
  const terminal = TERMINAL_STATUSES.has(job.status);
  const startText = job.started_at ?? (terminal ? job.created_at : null);
  if (!startText) return null;
  const start = Date.parse(startText);
  const end = job.finished_at ? Date.parse(job.finished_at) : terminal ? start : now;
  if (Number.isNaN(start) || Number.isNaN(end)) return null;
  return Math.max(0, end - start);
}

export function formatDuration(
  job: Pick<Job, "status" | "created_at" | "started_at" | "finished_at">,
  now: number = Date.now(),
): string {
  const ms = jobDurationMillis(job, now);
  return ms === null ? "—" : formatMillis(ms);
}

/** Progress as a fraction 0..1, or null when it cannot be known yet (no tasks). */
export function progressFraction(job: Pick<Job, "status" | "progress">): number | null {
  if (job.status === "FINISHED") return 1;
  const { tasks_done, tasks_total, stages_done, stages_total } = job.progress;
  if (tasks_total > 0) return Math.min(1, tasks_done / tasks_total);
  if (stages_total > 0) return Math.min(1, stages_done / stages_total);
  return null;
}
