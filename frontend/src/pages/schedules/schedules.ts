// What the schedules page shows, kept apart from React (unit-tested).
import type { ScheduleRun } from "../../api";

export const OPERATORS = [">", ">=", "<", "<=", "=", "!="] as const;

/** The browser's IANA time zone (the default of a new schedule). */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** A run in a few words: its status, and its error's code and message when it failed. */
export function runText(run: Pick<ScheduleRun, "status" | "error">): string {
  const error = run.error as { code?: unknown; message?: unknown } | null;
  if (run.status === "FAILED" && error && typeof error.message === "string") {
    return `FAILED: ${typeof error.code === "string" ? `${error.code} — ` : ""}${error.message}`;
  }
  return run.status === "SUBMITTED" ? "waiting or running" : run.status;
}
