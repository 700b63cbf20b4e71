// Formatting of a job's Spark stage metrics (progress.stages) for the job page: pure, tested in
// stages.test.ts.
import type { JobStage } from "../../api";
import { countOf, formatBytes, formatCount, formatMaybeMillis } from "../../format";

/** A stage's duration: "85 ms", "2.4 s", "3 min 05 s"; "—" when it did not complete. */
export const formatStageDuration = (ms: number | null | undefined): string => formatMaybeMillis(ms);

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
  const parts = [countOf(totals.stages, "stage")];
  if (totals.rowsRead > 0) parts.push(`${formatCount(totals.rowsRead)} rows read`);
  if (totals.bytesWritten > 0) parts.push(`${formatBytes(totals.bytesWritten)} written`);
  if (totals.spilled > 0) parts.push(`${formatBytes(totals.spilled)} spilled`);
  return parts.join(" · ");
}

/** What Spark's action names mean to a reader of the job page (Spark names a stage after the
 * call that started its Spark job: Tessera's own code, or Spark's internals). */
const ACTIONS: readonly [RegExp, string][] = [
  [/withThreadLocalCaptured|broadcast/i, "Builds a broadcast table or a subquery's result, ahead of the query"],
  [/^(toArrow|collectAsArrowToPython|collectToPython|collect|toPandas|toLocalIterator|take|head|first|tail|showString)$/, "Returns the result's rows"],
  [/^(save|saveAsTable|insertInto|parquet|csv|json|orc|text|writeTo|append|overwrite|create)$/, "Writes the table's files"],
  [/^count$/, "Counts rows"],
  [/^(foreachBatch|start|awaitTermination|processAllAvailable)$/, "Runs a micro-batch of the stream"],
  [/^(sql|cache|persist|checkpoint|localCheckpoint)$/, "Runs the statement"],
];

/** What a stage does, in a reader's words: from Spark's name for it where that is known, else
 * from what it read and wrote (a stage that writes shuffle data prepares a join, an aggregation
 * or a sort for the next stage). */
export function stagePurpose(stage: JobStage): string {
  const shuffles = stage.shuffle_write_bytes > 0 || stage.shuffle_write_rows > 0;
  const readsShuffle = stage.shuffle_read_bytes > 0 || stage.shuffle_read_rows > 0;
  const readsInput = stage.bytes_read > 0 || stage.rows_read > 0;
  if (shuffles) {
    const source = readsInput ? "Reads input" : readsShuffle ? "Reads the last stage's output" : "Computes rows";
    return `${source} and shuffles it for a join, aggregation or sort`;
  }
  const action = ACTIONS.find(([pattern]) => pattern.test(stage.name.trim()));
  if (action) return action[1];
  if (stage.bytes_written > 0 || stage.rows_written > 0) return "Writes the table's files";
  if (readsShuffle) return "Combines the shuffled rows";
  if (readsInput) return "Reads input";
  return "Computes rows";
}
