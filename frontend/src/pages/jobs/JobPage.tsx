// /jobs/<id>: one job — SQL, status, times, live progress and Cancel, its error, its Spark
// stages, its result and the timeline of its events; for a stream, its live figures and chart
// and a Stop button.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { ApiError, TERMINAL, enc, get, type Job, type JobEvent, type Page } from "../../api";
import { JOB_POLL_MS } from "../../data/client";
import { jobPath, useJob } from "../../data/jobs";
import { useClock, useWrite } from "../../data/queries";
import { Link, navigate, pathOf, useSegments, useTitle } from "../../router";
import { openInEditor } from "../../store";
import {
  JobProgress,
  JobStatusBadge,
  cancelJob,
  formatDuration,
} from "../../components/jobs/JobProgress";
import { formatCount, formatOffset, formatTimestamp } from "../../format";
import { CanceledNote } from "../../components/jobs/CanceledNote";
import { ErrorTraceback } from "../../components/jobs/ErrorTraceback";
import { ResultView } from "../../components/results/ResultView";
import { StreamChart, StreamFigures, StreamingBadge, useStreamSeries } from "../../components/jobs/StreamView";
import { collapseBatches, streamState } from "../../components/jobs/stream";
import { LiveTail } from "../../components/results/LiveTail";
import { oneLine } from "./filters";
import { PlanView } from "./PlanView";
import { StagesLink, StagesView, hasStagesSection, useJobStages } from "./StagesView";
import "./jobs-pages.css";

/** Event types that mark the commit protocol of writes (highlighted in the timeline). */
const HOOK_EVENTS = new Set(["stage_table_created", "data_committed", "stage_table_dropped", "data_cleaned", "batch_committed"]);
/** How often the events of a running stream are read again (a batch job's are read on each
 * change of the job; a stream changes with every micro-batch). */
const STREAM_EVENTS_MS = 5000;
/** The timeline shows the latest this many `batch_committed` events of a stream. */
const TIMELINE_BATCHES = 20;

export function JobPage() {
  const id = useSegments()[1] ?? "";
  const { job, error, setJob } = useJob(id);
  const ended = !!job && TERMINAL.has(job.status);
  const stages = useJobStages(job && ended ? job : null);
  const cancelWrite = useWrite(cancelJob, ["jobs"]).mutateAsync;
  const [cancelError, setCancelError] = useState<string | null>(null);
  const [canceling, setCanceling] = useState(false);
  useTitle(job ? `Job ${oneLine(job.sql, 40)}` : "Job");

  const running = !!job && !TERMINAL.has(job.status);
  const now = useClock(running ? JOB_POLL_MS : null);
  const events = useJobEvents(job);

  if (error && !job)
    return (
      <div className="page job-page">
        <h1>Job</h1>
        <div className="alert" role="alert">
          {error.status === 404 ? "This job does not exist, or it is not yours." : error.message}
        </div>
        <p>
          <Link to="/jobs">Back to the jobs</Link>
        </p>
      </div>
    );
  if (!job)
    return (
      <div className="page job-page">
        <p className="muted">Loading the job…</p>
      </div>
    );

  const cancel = async () => {
    setCancelError(null);
    setCanceling(true);
    try {
      setJob(await cancelWrite(job.id));
    } catch (failure) {
      setCancelError(failure instanceof ApiError ? failure.message : "Canceling failed.");
    } finally {
      setCanceling(false);
    }
  };

  const openEditor = () => {
    openInEditor({ sql: job.sql, title: `Job ${oneLine(job.sql, 24)}` });
    navigate("/editor");
  };

  const target = job.target;
  const stream = streamState(job);
  const streaming = stream.phase !== "batch";
  return (
    <div className="page job-page" data-testid="job-page">
      <p className="muted">
        <Link to="/jobs">← Jobs</Link>
      </p>
      <div className="job-title">
        <h1>Job</h1>
        <JobStatusBadge status={job.status} />
        <span className="badge">{job.kind}</span>
        {running && streaming && <StreamingBadge />}
        <span className="spacer" />
        {running && (
          <button
            type="button"
            className="danger"
            onClick={() => void cancel()}
            disabled={canceling}
            title={streaming ? "Stop the stream: the job ends CANCELED; what it committed stays." : undefined}
          >
            {streaming ? (canceling ? "Stopping…" : "Stop stream") : canceling ? "Canceling…" : "Cancel"}
          </button>
        )}
        <button type="button" className="primary" onClick={openEditor}>
          Open in editor
        </button>
      </div>
      {cancelError && (
        <div className="alert" role="alert">
          {cancelError}
        </div>
      )}

      <dl className="job-meta card">
        <dt>Id</dt>
        <dd className="mono">{job.id}</dd>
        <dt>User</dt>
        <dd>{job.user}</dd>
        <dt>Kind</dt>
        <dd>{job.kind}</dd>
        <dt>Target</dt>
        <dd>
          {target && target.length === 3 ? (
            <Link to={pathOf("catalog", target[0], target[1], "table", target[2])} className="mono">
              {target.join(".")}
            </Link>
          ) : target && target.length ? (
            <span className="mono">{target.join(".")}</span>
          ) : (
            <span className="muted">—</span>
          )}
        </dd>
        <dt>Created</dt>
        <dd title={job.created_at}>{formatTimestamp(job.created_at)}</dd>
        <dt>Started</dt>
        <dd title={job.started_at ?? undefined}>{formatTimestamp(job.started_at)}</dd>
        <dt>Finished</dt>
        <dd title={job.finished_at ?? undefined}>{formatTimestamp(job.finished_at)}</dd>
        <dt>Duration</dt>
        <dd data-testid="job-duration">{formatDuration(job, now)}</dd>
        <dt>Engine</dt>
        <dd data-testid="job-engine">
          {job.engine ? (
            <Link to="/engines" className="mono" title={job.engine}>
              {job.engine.slice(0, 8)}
            </Link>
          ) : (
            <span className="muted">{job.started_at ? "the worker's own Spark" : "—"}</span>
          )}
        </dd>
        {!running && hasStagesSection(job) && (
          <>
            <dt>Spark</dt>
            <dd className="span-3">
              <StagesLink stages={stages} />
            </dd>
          </>
        )}
      </dl>

      {running && !streaming && (
        <section aria-label="Progress">
          <JobProgress job={job} />
        </section>
      )}

      {streaming && <StreamSection key={job.id} job={job} events={events.data} />}

      {job.status === "CANCELED" ? <CanceledNote job={job} /> : job.error && <JobErrorBox error={job.error} />}

      <section aria-labelledby="job-sql-heading">
        <h2 id="job-sql-heading">SQL</h2>
        <pre className="job-sql" data-testid="job-sql">
          {job.sql}
        </pre>
      </section>

      {job.progress.stages_total > 0 && (
        <section aria-labelledby="job-spark-heading">
          <h2 id="job-spark-heading">Spark work</h2>
          <dl className="job-meta card job-spark" data-testid="job-spark">
            <dt>Stages</dt>
            <dd>
              {job.progress.stages_done} of {job.progress.stages_total}
            </dd>
            <dt>Tasks</dt>
            <dd>
              {job.progress.tasks_done} of {job.progress.tasks_total}
            </dd>
          </dl>
        </section>
      )}

      {!running && hasStagesSection(job) && <StagesView stages={stages} total={job.progress.stages_total} />}

      {job.status === "FINISHED" && job.kind === "explain" && <PlanView job={job} />}

      {stream.phase !== "batch" && stream.select && (
        <section className="job-result" aria-labelledby="job-tail-heading">
          <h2 id="job-tail-heading">Latest rows</h2>
          <LiveTail job={job} height={480} />
        </section>
      )}

      {!streaming && job.status === "FINISHED" && job.result && (
        <section className="job-result" aria-labelledby="job-result-heading">
          <h2 id="job-result-heading">Result</h2>
          <ResultView job={job} height={480} />
        </section>
      )}

      <Timeline job={job} events={events.data} error={events.error} />
    </div>
  );
}

function JobErrorBox({ error }: { error: NonNullable<Job["error"]> }) {
  const details = error.details ?? {};
  const line = details["line"];
  const column = details["column"];
  return (
    <div className="alert job-error" role="alert" data-testid="job-error">
      <span className="code">{error.code}</span>
      {error.message}
      {(typeof line === "number" || typeof line === "string") && (
        <div>
          at line {String(line)}
          {(typeof column === "number" || typeof column === "string") && `, column ${String(column)}`}
        </div>
      )}
      <ErrorTraceback details={details} />
    </div>
  );
}

function detailText(detail: JobEvent["detail"]): string {
  if (detail === null || detail === undefined) return "";
  if (typeof detail === "string") return detail;
  const entries = Object.entries(detail);
  if (entries.length === 0) return "";
  return entries
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");
}

async function allEvents(id: string, signal: AbortSignal): Promise<JobEvent[]> {
  const events: JobEvent[] = [];
  let token: string | null = null;
  for (let guard = 0; guard < 20; guard++) {
    const suffix: string = token ? `&page_token=${encodeURIComponent(token)}` : "";
    const page: Page<JobEvent> = await get<Page<JobEvent>>(
      `/jobs/${enc(id)}/events?page_size=1000${suffix}`,
      { signal },
    );
    events.push(...page.items);
    token = page.next_page_token;
    if (!token) break;
  }
  return events;
}

/** The job's events. Loaded again whenever the followed job changes (status, progress, a
 * cancel): events are written with those changes, so nothing needs polling — except for a
 * running stream, whose progress changes with each micro-batch: read every few seconds. */
function useJobEvents(job: Job | null): { data: JobEvent[] | null; error: string | null } {
  const id = job?.id ?? "";
  const live = !!job && !TERMINAL.has(job.status) && streamState(job).phase !== "batch";
  const query = useQuery({
    queryKey: [
      "jobs",
      jobPath(id),
      "events",
      job?.status ?? "",
      live ? "stream" : JSON.stringify(job?.progress ?? null),
      job?.error?.code ?? "",
    ],
    queryFn: ({ signal }) => allEvents(id, signal),
    enabled: !!job,
    placeholderData: (previous) => previous,
    refetchInterval: live ? STREAM_EVENTS_MS : false,
  });
  const error = query.error
    ? query.error instanceof ApiError
      ? query.error.message
      : "The events could not be loaded."
    : null;
  return { data: query.data ?? null, error };
}

/** A stream's live figures and chart (its latest batches, from polls and events). */
function StreamSection({ job, events }: { job: Job; events: JobEvent[] | null }) {
  const state = streamState(job);
  const points = useStreamSeries(job, events);
  if (state.phase === "batch") return null;
  const stream = state.phase === "starting" ? null : state.stream;
  return (
    <section aria-labelledby="job-stream-heading" data-testid="job-stream">
      <h2 id="job-stream-heading">
        Stream{" "}
        <span className="muted small-text">
          {state.phase === "live"
            ? "live — updated with each micro-batch"
            : state.phase === "starting"
              ? "starting — waiting for the first micro-batch"
              : `stopped (${state.status}); the figures of its last micro-batch`}
        </span>
      </h2>
      {stream ? (
        <StreamFigures stream={stream} select={state.select} />
      ) : (
        <p className="muted">No micro-batch has run yet.</p>
      )}
      <StreamChart points={points} />
    </section>
  );
}

function Timeline({ job, events, error }: { job: Job; events: JobEvent[] | null; error: string | null }) {
  const origin = job.created_at;
  const { events: listed, hidden } = events ? collapseBatches(events, TIMELINE_BATCHES) : { events: null, hidden: 0 };
  return (
    <section aria-labelledby="job-events-heading">
      <h2 id="job-events-heading">Events</h2>
      <p className="muted">Times are relative to when the job was created.</p>
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}
      {hidden > 0 && (
        <p className="muted" data-testid="job-events-hidden">
          {formatCount(hidden)} earlier batch_committed events are not listed (the latest {TIMELINE_BATCHES} are).
        </p>
      )}
      {listed === null ? (
        <p className="muted">Loading events…</p>
      ) : listed.length === 0 ? (
        <p className="muted">No events yet.</p>
      ) : (
        <ol className="timeline" data-testid="job-events">
          {listed.map((event, index) => (
            <li key={index} className={HOOK_EVENTS.has(event.type) ? "hook" : undefined}>
              <span className="at" title={event.at}>
                {formatOffset(event.at, origin)}
              </span>
              <span className="type">{event.type}</span>
              <span className="detail">{detailText(event.detail)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
