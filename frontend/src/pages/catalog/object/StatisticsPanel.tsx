// A table's statistics (GET …/statistics): files, size, rows from the Parquet footers and the
// last commit — read by the server from storage and the committing job, no Spark involved —
// and the column statistics the last ANALYZE TABLE stored, which a user who may change the
// table computes here (a job, followed until it ends).
import { useEffect, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import {
  ApiError,
  TERMINAL,
  get,
  type ColumnFigures,
  type ColumnStatistics,
  type Job,
  type TableStatistics,
} from "../../../api";
import { JobProgress } from "../../../components/jobs/JobProgress";
import { DataGrid } from "../../../components/grid/DataGrid";
import { countOf, formatBytes, formatCount, formatDecimal, formatTimestamp } from "../../../format";
import { untilEnded } from "../../../data/statements";
import { keyOf } from "../../../data/queries";
import { Link, pathOf } from "../../../router";
import { ErrorAlert } from "../common";
import { submit } from "../sql";

export type { ColumnFigures, ColumnStatistics, TableStatistics };

/** The statement the button runs for the table at `sqlPath` (quoted parts). */
export const analyzeStatement = (sqlPath: string) =>
  `ANALYZE TABLE ${sqlPath} COMPUTE STATISTICS FOR ALL COLUMNS`;

const count = formatCount;
const decimal = (value: number | null) => formatDecimal(value, 2);

/** "12.5 / 40" for strings and binary; "—" for the others. */
export function lengths(figures: ColumnFigures): string {
  if (figures.avg_length === null && figures.max_length === null) return "—";
  return `${decimal(figures.avg_length)} / ${count(figures.max_length)}`;
}

/** Whether data was committed after the statistics were computed (they are not updated). */
export function isStale(computedAt: string | null, lastCommitAt: string | null | undefined): boolean {
  return computedAt !== null && !!lastCommitAt && Date.parse(lastCommitAt) > Date.parse(computedAt);
}

function ColumnStatisticsTable({ stats, lastCommitAt }: { stats: ColumnStatistics; lastCommitAt?: string | null }) {
  if (stats.computed_at === null) {
    return <p className="muted">Only files and size were counted (NOSCAN); no column statistics yet.</p>;
  }
  return (
    <>
      <p className="muted" data-testid="column-stats-computed">
        Computed {formatTimestamp(stats.computed_at)} over {count(stats.row_count)} rows. Distinct counts are
        approximate.
        {isStale(stats.computed_at, lastCommitAt) ? (
          <strong data-testid="column-stats-stale"> Data was written since: compute them again.</strong>
        ) : null}
      </p>
      {stats.columns.length === 0 ? (
        <p className="muted">No column was analyzed.</p>
      ) : (
        <DataGrid
          rows={stats.columns}
          className="cat-schema"
          testId="column-stats"
          rowKey={(c) => c.name}
          rowAttributes={(c) => ({ "data-column": c.name })}
          columns={[
            { header: "Column", cell: (c) => c.name },
            { header: "Type", className: "muted", cell: (c) => c.data_type ?? "—" },
            { header: "Nulls", cell: (c) => count(c.null_count) },
            { header: "Distinct", cell: (c) => count(c.distinct_count) },
            { header: "Min", cell: (c) => c.min ?? "—" },
            { header: "Max", cell: (c) => c.max ?? "—" },
            { header: "Avg", cell: (c) => decimal(c.avg) },
            { header: "Avg / max length", cell: lengths },
          ]}
        />
      )}
    </>
  );
}

/** The "Compute column statistics" button: runs ANALYZE TABLE as a job, shows its progress,
 * and loads the statistics again once it has finished. */
function ComputeButton({ sqlPath, statsKey }: { sqlPath: string; statsKey: readonly unknown[] }) {
  const client = useQueryClient();
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);
  const running = job !== null && !TERMINAL.has(job.status);

  const compute = async () => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setError(null);
    try {
      const first = await submit(client, analyzeStatement(sqlPath), 0, controller.signal);
      setJob(first);
      const last = await untilEnded(client, first, controller.signal, setJob);
      setJob(last);
      if (last.status !== "FINISHED") {
        throw new ApiError(400, {
          code: last.error?.code ?? last.status,
          message: last.error?.message ?? `The statement ended ${last.status}.`,
          details: (last.error?.details as Record<string, unknown> | undefined) ?? {},
        });
      }
      await client.invalidateQueries({ queryKey: statsKey });
    } catch (caught) {
      if (!controller.signal.aborted) setError(caught);
    }
  };

  return (
    <div data-testid="column-stats-compute">
      <div className="toolbar">
        <button type="button" className="small" onClick={() => void compute()} disabled={running}>
          {running ? "Computing column statistics…" : "Compute column statistics"}
        </button>
      </div>
      {running && job ? <JobProgress job={job} /> : null}
      <ErrorAlert error={error} />
    </div>
  );
}

export function StatisticsPanel({
  base,
  sqlPath,
  canAnalyze = false,
}: {
  base: string;
  /** The table's quoted SQL path, for ANALYZE TABLE. */
  sqlPath?: string;
  /** Whether the user may write into the table (`can.write`, MODIFY): only then the button
   * shows. */
  canAnalyze?: boolean;
}) {
  const path = `${base}/statistics`;
  const stats = useQuery({
    queryKey: keyOf(path),
    queryFn: ({ signal }) => get<TableStatistics>(path, { signal }),
  });
  if (stats.error) return <ErrorAlert error={stats.error} />;
  if (!stats.data) return <p className="muted">Reading the table's files…</p>;
  const s = stats.data;
  return (
    <>
      <TableFacts s={s} />
      <h3>Column statistics</h3>
      {s.column_statistics ? (
        <ColumnStatisticsTable stats={s.column_statistics} lastCommitAt={s.last_commit?.at} />
      ) : (
        <p className="muted" data-testid="column-stats-none">
          Not computed yet{canAnalyze ? "." : ": the table's owner can compute them, or anyone granted MODIFY on it."}
        </p>
      )}
      {canAnalyze && sqlPath ? <ComputeButton sqlPath={sqlPath} statsKey={keyOf(path)} /> : null}
    </>
  );
}

function TableFacts({ s }: { s: TableStatistics }) {
  const commit = s.last_commit;
  return (
    <dl className="cat-facts" data-testid="statistics">
      <dt>Rows</dt>
      <dd data-testid="stat-rows">
        {formatCount(s.row_count)}
        {s.row_count === null ? <span className="muted"> (counted for Parquet files only)</span> : null}
      </dd>
      <dt>Size</dt>
      <dd data-testid="stat-size" title={`${formatCount(s.size_bytes)} bytes`}>
        {formatBytes(s.size_bytes)}
      </dd>
      <dt>Files</dt>
      <dd data-testid="stat-files">
        {formatCount(s.files)}
        {s.complete ? null : <span className="muted"> (or more: counting stopped)</span>}
      </dd>
      <dt>Last written</dt>
      <dd>{formatTimestamp(s.last_modified)}</dd>
      <dt>Last commit</dt>
      <dd data-testid="stat-commit">
        {commit ? (
          <>
            {formatTimestamp(commit.at)} · {commit.kind}
            {commit.rows_written !== null ? ` of ${countOf(commit.rows_written, "row")}` : ""}
            {commit.user ? ` by ${commit.user}` : ""}
            {commit.job ? (
              <>
                {" "}
                (<Link to={pathOf("jobs", commit.job)}>job {commit.job.slice(0, 8)}</Link>)
              </>
            ) : null}
          </>
        ) : (
          <span className="muted">No commit recorded.</span>
        )}
      </dd>
    </dl>
  );
}
