// Pure time helpers for jobs (unit-tested in time.test.ts).
import type { Job } from "../../api";

const TERMINAL_STATUSES = new Set(["FINISHED", "FAILED", "CANCELED"]);

/** Milliseconds as a short human duration: "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min". */
export function formatMillis(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.floor(seconds);
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${String(whole % 60).padStart(2, "0")} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

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

/** An event's time relative to an origin, e.g. "+1.234 s", "+2 min 03.5 s". */
export function formatOffset(at: string, origin: string): string {
  const delta = Date.parse(at) - Date.parse(origin);
  if (Number.isNaN(delta)) return "";
  const sign = delta < 0 ? "−" : "+";
  const abs = Math.abs(delta);
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(3)} s`;
  const minutes = Math.floor(abs / 60_000);
  const rest = ((abs % 60_000) / 1000).toFixed(1).padStart(4, "0");
  return `${sign}${minutes} min ${rest} s`;
}

/** A timestamp in the viewer's locale, with seconds. */
export function formatTimestamp(value: string | null | undefined): string {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** Progress as a fraction 0..1, or null when it cannot be known yet (no tasks). */
export function progressFraction(job: Pick<Job, "status" | "progress">): number | null {
  if (job.status === "FINISHED") return 1;
  const { tasks_done, tasks_total, stages_done, stages_total } = job.progress;
  if (tasks_total > 0) return Math.min(1, tasks_done / tasks_total);
  if (stages_total > 0) return Math.min(1, stages_done / stages_total);
  return null;
}
