// Formatting of a job's Spark stage metrics (progress.stages) for the job page: pure, tested in
// stages.test.ts.
import type { JobStage } from "../../api";

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** A byte count for people: "0 B", "512 B", "1.5 KiB", "12 MiB" (binary units, 3 digits). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return "0 B";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))} ${BYTE_UNITS[unit]}`;
}

/** A row count with thousands separators: 1234567 → "1,234,567". */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString("en-US");
}

/** A stage's duration: "85 ms", "2.4 s", "3 min 5 s"; "—" when it did not complete. */
export function formatStageDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || ms < 0) return "—";
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(1))} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

/** "5" or "5 (attempt 1)" for a retried stage. */
export function stageLabel(stage: Pick<JobStage, "stage_id" | "attempt">): string {
  return stage.attempt > 0 ? `${stage.stage_id} (attempt ${stage.attempt})` : String(stage.stage_id);
}

/** Rows and bytes read/written, shuffled and spilled over all the stages. */
export interface StageTotals {
  stages: number;
  tasks: number;
  rowsRead: number;
  bytesRead: number;
  rowsWritten: number;
  bytesWritten: number;
  shuffleRead: number;
  shuffleWrite: number;
  spilled: number;
}

export function stageTotals(stages: readonly JobStage[]): StageTotals {
  const totals: StageTotals = {
    stages: stages.length,
    tasks: 0,
    rowsRead: 0,
    bytesRead: 0,
    rowsWritten: 0,
    bytesWritten: 0,
    shuffleRead: 0,
    shuffleWrite: 0,
    spilled: 0,
  };
  for (const stage of stages) {
    totals.tasks += stage.tasks;
    totals.rowsRead += stage.rows_read;
    totals.bytesRead += stage.bytes_read;
    totals.rowsWritten += stage.rows_written;
    totals.bytesWritten += stage.bytes_written;
    totals.shuffleRead += stage.shuffle_read_bytes;
    totals.shuffleWrite += stage.shuffle_write_bytes;
    totals.spilled += stage.memory_spilled + stage.disk_spilled;
  }
  return totals;
}

/** The summary line of the "Spark stages" link: "3 stages · 1,000 rows read · 2.5 MiB written". */
export function stagesSummary(stages: readonly JobStage[]): string {
  const totals = stageTotals(stages);
  const parts = [`${totals.stages} ${totals.stages === 1 ? "stage" : "stages"}`];
  if (totals.rowsRead > 0) parts.push(`${formatCount(totals.rowsRead)} rows read`);
  if (totals.bytesWritten > 0) parts.push(`${formatBytes(totals.bytesWritten)} written`);
  if (totals.spilled > 0) parts.push(`${formatBytes(totals.spilled)} spilled`);
  return parts.join(" · ");
}
