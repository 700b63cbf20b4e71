// Below the editor: the running job (status, progress, elapsed, Cancel, job link), the
// summary or error of the run, the statements of a script, and the result grid. A stream
// (docs/streaming.md) shows "Streaming" instead of a progress bar and a Stop button: a streaming
// SELECT its live tail in the grid, a streaming write its live figures and a job page link.
// A large result shows its first rows while the job still writes it (usePartialResult): the
// grid fills as batches come, with the live count and "Still running", and gives way to the
// finished result's grid once its first page is in.
import { CanceledNote } from "../../components/jobs/CanceledNote";
import { ErrorTraceback } from "../../components/jobs/ErrorTraceback";
import { JobProgress, JobStatusBadge } from "../../components/jobs/JobProgress";
import { StreamLine, StreamingBadge } from "../../components/jobs/StreamView";
import { isStreaming, streamState } from "../../components/jobs/stream";
import { LiveTail } from "../../components/results/LiveTail";
import { PartialResultView } from "../../components/results/PartialResultView";
import { ResultView } from "../../components/results/ResultView";
import { useJob } from "../../data/jobs";
import { usePartialResult } from "../../data/partialResults";
import { formatElapsed } from "../../format";
import { Link } from "../../router";
import { SENTENCE_COLUMNS } from "./runSummary";
import type { RunState } from "./useStatementRunner";
import { errorAtText } from "./errorMarks";

export function RunArea({
  run,
  running,
  picked,
  elapsed,
  onPick,
  onCancel,
  savedQueryId,
  title,
}: {
  run: RunState | null;
  running: boolean;
  picked: number | null;
  elapsed: number;
  onPick(index: number): void;
  onCancel(): void;
  /** The tab's saved query: the result's chart config is kept with it. */
  savedQueryId?: string | null;
  /** The tab's title: downloads of the result are named after it. */
  title?: string;
}) {
  const runJob = run?.job ?? null;
  // A stream is followed here too (the same query as the run's, so no second poll): after a
  // reload, or once the run is over, its figures still move and it can still be stopped.
  const followed = useJob(runJob && isStreaming(runJob) ? runJob.id : null).job;
  const job = followed && runJob && followed.id === runJob.id ? followed : runJob;
  const stream = job ? streamState(job) : ({ phase: "batch" } as const);
  const streamLive = stream.phase === "starting" || stream.phase === "live";
  // A script's statements can each be looked at once they have ended; the last by default.
  const picks = picked !== null ? run?.done[picked] : undefined;
  const shown = picks ?? job;
  const shownStream = shown && shown.id !== job?.id ? streamState(shown) : stream;
  // The rows of a large result as they are written (never for a stream or a script's step).
  const rows = usePartialResult(job, !!run?.mayStream && stream.phase === "batch");
  const showPartial = !!rows.partial && (rows.showing || rows.cutShort) && shown?.id === job?.id;
  const showGrid =
    !showPartial &&
    shownStream.phase === "batch" &&
    shown?.status === "FINISHED" &&
    shown.result &&
    !shown.result.columns.every((column) => SENTENCE_COLUMNS.has(column.name));
  return (
    <div className="run-area" data-testid="run-area">
      {run === null && <p className="muted">Run a statement to see its result here.</p>}
      {run !== null && (
        <div className="run-status" role="status" data-testid="run-status">
          {job ? (
            <>
              {streamLive ? (
                <button
                  type="button"
                  className="danger small"
                  onClick={onCancel}
                  title="Stop the stream (the job ends CANCELED; what it wrote stays)"
                >
                  Stop
                </button>
              ) : running && !["FINISHED", "FAILED", "CANCELED"].includes(job.status) ? (
                <button type="button" className="danger small" onClick={onCancel}>
                  Cancel
                </button>
              ) : null}
              <span data-testid="run-job-status">
                <JobStatusBadge status={job.status} />
              </span>
              {streamLive && <StreamingBadge />}
              {run.step && (
                <span className="muted small-text">
                  statement {run.step[0]} of {run.step[1]}
                </span>
              )}
              {running && stream.phase === "batch" && <JobProgress job={job} />}
              {stream.phase === "starting" && (
                <span className="muted small-text" data-testid="stream-starting">
                  waiting for the first micro-batch…
                </span>
              )}
              {stream.phase !== "batch" && !stream.select && stream.phase !== "starting" && stream.stream && (
                <StreamLine stream={stream.stream} select={false} />
              )}
              <span className="muted small-text" data-testid="elapsed">
                {formatElapsed(elapsed)}
              </span>
              <Link to={`/jobs/${encodeURIComponent(job.id)}`} className="small-text">
                job details
              </Link>
            </>
          ) : (
            <span className="muted">{running ? "Submitting…" : ""}</span>
          )}
          {run.summary && (
            <span className="run-summary" data-testid="run-summary">
              {run.summary}
            </span>
          )}
        </div>
      )}
      {run?.requestError && (
        <div className="alert danger" role="alert">
          {run.requestError}
        </div>
      )}
      {job?.status === "CANCELED" && <CanceledNote job={job} />}
      {job?.error && job.status !== "RUNNING" && job.status !== "CANCELED" && (
        <div className="alert danger job-error" role="alert" data-testid="job-error">
          {run?.errorAt && (
            <span className="error-at" data-testid="error-at">
              {errorAtText(run.errorAt)}:{" "}
            </span>
          )}
          <strong>{job.error.code}</strong>: {job.error.message}
          <ErrorTraceback details={job.error.details} />
        </div>
      )}
      {run && run.done.length > 1 && (
        <div className="script-steps toolbar" role="group" aria-label="Statements of the script">
          {run.done.map((ended, index) => (
            <button
              key={ended.id}
              type="button"
              className="small"
              aria-pressed={shown?.id === ended.id}
              title={ended.sql}
              onClick={() => onPick(index)}
            >
              {index + 1}. <JobStatusBadge status={ended.status} />{" "}
              <span className="mono">{ended.sql.replace(/\s+/g, " ").slice(0, 40)}</span>
            </button>
          ))}
        </div>
      )}
      {shown && shownStream.phase !== "batch" && shownStream.select && (
        <div className="result-box">
          <LiveTail job={shown} />
        </div>
      )}
      {shown && shownStream.phase !== "batch" && !shownStream.select && (
        <p className="stream-note small-text" data-testid="stream-write-note">
          {streamLive
            ? "The stream writes into the table with each micro-batch until it is stopped; "
            : "The stream stopped; the rows it committed stay in the table. "}
          <Link to={`/jobs/${encodeURIComponent(shown.id)}`}>Live figures and chart on the job page</Link>
        </p>
      )}
      {showPartial && rows.partial && (
        <div className="result-box">
          <PartialResultView
            partial={rows.partial}
            ended={job?.status === "FAILED" || job?.status === "CANCELED" ? job.status : null}
          />
        </div>
      )}
      {showGrid && shown && (
        <div className="result-box">
          <ResultView job={shown} savedQueryId={savedQueryId} downloadName={title} />
        </div>
      )}
    </div>
  );
}
